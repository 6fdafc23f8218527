package io.sparkjournal.journal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Everything a load noticed (FORMAT.md, "Reading: where data ends"), the
 * fields tests/test_jvm_journal_agreement.py holds to the Python reader's
 * report. A read-only load moves nothing, so {@link #attic()} and
 * {@link #rolledBackTxIds()} stay empty and {@link #orphanBodiesRemoved()} 0;
 * they are there so the report reads as a writer's load does. Ids are u64s
 * held in longs (read unsigned). Lists are in the order the load met them.
 */
public final class LoadReport {

    /**
     * A torn tail: the newest file's data ends at {@code offset}; after it lie
     * {@code recordsDropped} complete records (never acknowledged as durable)
     * over {@code bytesDropped} bytes, or a torn record of its own (0, 0).
     */
    public record TornTail(String file, long offset, int recordsDropped, long bytesDropped) {
    }

    /**
     * What recovery mode found in one damaged file: where and what the damage
     * is, and the records and transactions that are lost with it (sorted,
     * unsigned). A read-only load leaves the file in place ({@code movedTo}
     * is the file itself); a writer would move it to attic/.
     */
    public record Recovery(String file, String movedTo, long offset, String detail,
                           List<Long> lostRecordIds, List<Long> lostTxIds) {
    }

    int files;
    int filesReused;
    long recordsScanned;
    int liveRecords;
    long bytesScanned;
    final List<Long> preparedTxIds = new ArrayList<>();
    final List<Long> brokenTxIds = new ArrayList<>();
    TornTail tornTail;
    final List<Recovery> recoveries = new ArrayList<>();
    final List<String> warnings = new ArrayList<>();

    /** Data files loaded (damaged ones set aside by recovery not counted). */
    public int files() { return files; }

    /** Data files whose scan this JVM kept from an earlier load (SealedScans): unchanged
     *  since, so neither read nor checked again. JVM only. */
    public int filesReused() { return filesReused; }

    /** Data records of the loaded files. */
    public long recordsScanned() { return recordsScanned; }

    /** Live committed records. */
    public int liveRecords() { return liveRecords; }

    /** Sum of the loaded files' ends of data. */
    public long bytesScanned() { return bytesScanned; }

    /** Records whose CRC is checked when read: always 0 here (no deferral). */
    public long crcDeferred() { return 0; }

    /** Transactions prepared and not ended, in the order they began. */
    public List<Long> preparedTxIds() { return Collections.unmodifiableList(preparedTxIds); }

    /** Always empty for a reader (a writer rolls back unprepared transactions). */
    public List<Long> rolledBackTxIds() { return List.of(); }

    /** Transactions whose COMMIT count did not match: not applied. */
    public List<Long> brokenTxIds() { return Collections.unmodifiableList(brokenTxIds); }

    /** The torn tail found, or null. */
    public TornTail tornTail() { return tornTail; }

    /** Always empty for a reader (a writer moves bad files to attic/). */
    public List<String> attic() { return List.of(); }

    /** One entry per damaged file, recovery mode only. */
    public List<Recovery> recoveries() { return Collections.unmodifiableList(recoveries); }

    /** Always 0 for a reader. */
    public int orphanBodiesRemoved() { return 0; }

    /** Files skipped (bad header, wrong size without records), as "path: why; skipped". */
    public List<String> warnings() { return Collections.unmodifiableList(warnings); }
}
