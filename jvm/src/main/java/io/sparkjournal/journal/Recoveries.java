package io.sparkjournal.journal;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What recovery mode reports as lost with one damaged file, comparing {@code full} (every valid record of every file,
 * past the damage too, every COMMIT applied) with {@code kept} (the damaged
 * files left out):
 * <ul>
 *   <li>records whose live version differs or is missing in {@code kept}, and
 *       records live in {@code kept} but not in {@code full} (a DELETE lost);</li>
 *   <li>every non-zero tx id of a record of the damaged file; the records of
 *       those still without an outcome and not prepared in {@code full} (their
 *       COMMIT may have been lost) count as lost too.</li>
 * </ul>
 * Both lists are sorted as unsigned numbers, without repeats. The damaged
 * file stays where it is: a reader moves nothing.
 */
final class Recoveries {

    private Recoveries() {
    }

    static LoadReport.Recovery whatWasLost(ReplayState full, ReplayState kept,
                                           DataEnd.Damage damage) {
        Set<Long> lost = new LinkedHashSet<>();
        for (Map.Entry<Long, Version> entry : full.live.entrySet()) {
            if (!entry.getValue().equals(kept.live.get(entry.getKey()))) {
                lost.add(entry.getKey());
            }
        }
        for (Long recordId : kept.live.keySet()) {
            if (!full.live.containsKey(recordId)) {
                lost.add(recordId);
            }
        }
        Set<Long> txIds = new LinkedHashSet<>();
        LoadedFile file = damage.file();
        for (int i = 0; i < file.scan.n(); i++) {
            if (file.scan.txId(i) != 0) {
                txIds.add(file.scan.txId(i));
            }
        }
        List<Long> lostTx = sorted(txIds);
        for (Long txId : lostTx) {
            ReplayState.Tx tx = full.txs.get(txId);
            if (tx != null && !tx.prepared) {
                tx.records.forEach(record -> lost.add(record[1]));
            }
        }
        return new LoadReport.Recovery(file.name, file.name, damage.offset(), damage.detail(),
                sorted(lost), lostTx);
    }

    private static List<Long> sorted(Set<Long> ids) {
        List<Long> out = new ArrayList<>(ids);
        out.sort(Long::compareUnsigned);
        return List.copyOf(out);
    }
}
