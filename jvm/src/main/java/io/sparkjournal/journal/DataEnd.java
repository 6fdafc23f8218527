package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import io.sparkjournal.format.ScanResult;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where each scanned file's data ends, and which files are damaged (FORMAT.md,
 * "Reading: where data ends"). Every file's data
 * first ends where its clean data ends; then, file by file in log order:
 *
 * <ol>
 *   <li>a file of the wrong size that holds records: damaged at its clean end
 *       (or its length, if smaller);</li>
 *   <li>a file written whole by compaction (sealed end in its header):
 *       damaged unless its clean data ends exactly there with nothing valid
 *       after, wherever it stands;</li>
 *   <li>valid records of its own after the first foreign word: a torn tail
 *       (reported, dropped) when the file is the newest with data and they
 *       all end within the header's sync window of that word; otherwise
 *       damaged at the foreign word;</li>
 *   <li>no valid record after, but the foreign word begins a record header
 *       of its own file id: damaged in a file before the newest with data,
 *       else a torn tail of no records;</li>
 *   <li>then, for every file that names a previous file (not written whole
 *       by compaction, not already damaged) whose data ends before the
 *       recorded "previous file's end": that previous file is damaged at its
 *       end.</li>
 * </ol>
 * The last torn tail found is the one reported. Damage is returned in the
 * order found; the loader fails on the first unless recovery is asked for.
 */
final class DataEnd {

    /** A damaged file, where, and what was found. */
    record Damage(LoadedFile file, long offset, String detail) {
    }

    private DataEnd() {
    }

    static List<Damage> classify(List<LoadedFile> files, LoadReport report) {
        List<Damage> damaged = new ArrayList<>();
        int newestWithData = -1;
        Map<Long, LoadedFile> byId = new HashMap<>();
        for (int i = 0; i < files.size(); i++) {
            if (files.get(i).scan.n() > 0) {
                newestWithData = i;
            }
            byId.put(files.get(i).fileId(), files.get(i));
        }
        for (int index = 0; index < files.size(); index++) {
            LoadedFile file = files.get(index);
            ScanResult scan = file.scan;
            file.nData = scan.nClean();
            file.end = scan.cleanEnd();
            if (file.sizeDamage != null) {
                damaged.add(new Damage(file, Math.min(scan.cleanEnd(), file.map.capacity()),
                        file.sizeDamage));
                continue;
            }
            int after = scan.n() - scan.nClean();
            long sealedEnd = file.header.sealedEnd();
            if (sealedEnd != 0 && (after > 0 || scan.cleanEnd() != sealedEnd)) {
                String reason = scan.foreignReason();
                damaged.add(new Damage(file, scan.cleanEnd(), "the file was written whole with"
                        + " data up to " + sealedEnd + ", but its clean data ends at "
                        + scan.cleanEnd() + (reason.isEmpty() ? "" : " (" + reason + ")")));
                continue;
            }
            boolean sealed = index < newestWithData;
            if (after > 0) {
                int last = scan.n() - 1;
                long lastEnd = scan.offset(last) + Layout.recordSize(scan.bodyLength(last));
                boolean withinWindow = Long.compareUnsigned(lastEnd - scan.firstForeign(),
                        file.header.syncWindow()) <= 0;
                if (sealed || !withinWindow) {
                    damaged.add(new Damage(file, scan.firstForeign(), scan.foreignReason()
                            + ", and " + after + " valid records follow it"));
                    continue;
                }
                report.tornTail = new LoadReport.TornTail(file.name, scan.cleanEnd(), after,
                        lastEnd - scan.cleanEnd());
                file.tornEnd = lastEnd;
            } else if (ownRecordAt(file.map, scan.firstForeign(), Layout.fileId32(file.fileId()))) {
                if (sealed) {
                    damaged.add(new Damage(file, scan.firstForeign(), scan.foreignReason()));
                    continue;
                }
                report.tornTail = new LoadReport.TornTail(file.name, scan.cleanEnd(), 0, 0);
            }
        }
        for (LoadedFile file : files) {
            long prevId = file.header.prevFileId();
            LoadedFile previous = prevId != 0 ? byId.get(prevId) : null;
            // A file written whole by compaction guards its own end (sealed end) and may
            // reuse the id of the file this header once followed.
            if (previous != null && previous.header.sealedEnd() == 0
                    && Long.compareUnsigned(previous.end, file.header.prevEnd()) < 0
                    && !ids(damaged).contains(previous.fileId())) {
                damaged.add(new Damage(previous, previous.end, "data ends at " + previous.end
                        + " but " + file.name + " records that it ended at "
                        + Long.toUnsignedString(file.header.prevEnd())));
            }
        }
        return damaged;
    }

    /** Does a record of this file, valid in all but its CRC, begin at {@code offset} (a torn
     *  or damaged record of the file; FORMAT.md)? Stale bytes of an earlier use carry another
     *  file id in their headers, but their bodies may hold anything: eight bytes that only
     *  happen to match the file id at a header's place are no record
     *  (FORMAT.md, "Reading: where data ends"). */
    private static boolean ownRecordAt(ByteBuffer view, long offset, long fileId32) {
        if (offset < 0 || offset + Layout.RECORD_HEADER_SIZE > view.capacity()) {
            return false;
        }
        int at = (int) offset;
        int type = Byte.toUnsignedInt(view.get(at + Layout.REC_TYPE));
        int flags = Byte.toUnsignedInt(view.get(at + Layout.REC_FLAGS));
        long bodyLength = Integer.toUnsignedLong(view.getInt(at + Layout.REC_BODY_LEN));
        return Integer.toUnsignedLong(view.getInt(at + Layout.REC_FILE_ID)) == fileId32
                && type >= Layout.ADD && type <= Layout.TYPE_MAX && (flags & ~Layout.KNOWN_FLAGS) == 0
                && offset + Layout.recordSize(bodyLength) <= view.capacity();
    }

    static Set<Long> ids(List<Damage> damaged) {
        Set<Long> ids = new HashSet<>();
        for (Damage damage : damaged) {
            ids.add(damage.file().fileId());
        }
        return ids;
    }
}
