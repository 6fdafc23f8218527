package io.sparkjournal.journal;

import io.sparkjournal.format.ScanResult;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The scans of data files that did not change, kept per JVM, so that a lane
 * loaded again in the same executor (a stream's next micro-batch, its offset
 * probes, the next query) reads and checks only the files written since:
 * loading a lane otherwise reads every byte of it and checks every record's
 * CRC, whatever part of it the read wants.
 *
 * <p>A scan is kept only when it checked every CRC, its file's size is its
 * header's, and it saw the whole of a file no write can still reach
 * (LaneLoader decides: written whole by compaction, or sealed by the writer
 * before the header of its successor, which the load read before the scan,
 * was written; a write started earlier and not yet landed cannot be missed),
 * and only for a file whose {@link SettledFile} identity (path, inode, size,
 * times; settled) it had then. It is reused for a file with the same identity
 * and file id. Every later write to a data file moves its times (a header
 * rewritten for reuse from the pool, which also gives it another file id;
 * zero-filling).
 *
 * <p>What is given up is what {@link SettledFile} says. Nothing on disk is written here. At most {@link #MAX_RECORDS} records'
 * scans are kept; the least recently used go first.
 */
final class SealedScans {

    static final long MAX_RECORDS = 1 << 20;

    /** What identifies a data file's bytes, as stat and its header say. */
    record Identity(SettledFile file, long fileId) {
    }

    private static final Map<Identity, ScanResult> SCANS = new LinkedHashMap<>(64, 0.75f, true);
    private static long records;

    private SealedScans() {
    }

    /**
     * The identity of {@code path} (whose header says {@code fileId}) now,
     * or null when the file changed too recently for a scan of it to be kept.
     */
    static Identity identity(Path path, long fileId) throws IOException {
        SettledFile file = SettledFile.of(path);
        return file == null ? null : new Identity(file, fileId);
    }

    /** The kept scan of the file with this identity, or null. */
    static synchronized ScanResult get(Identity identity) {
        return identity == null ? null : SCANS.get(identity);
    }

    /** Keeps a scan of a whole, sealed file that checked every CRC (see the class). */
    static synchronized void keep(Identity identity, ScanResult scan) {
        if (identity == null || SCANS.containsKey(identity)) {
            return;
        }
        SCANS.put(identity, scan);
        records += weight(scan);
        Iterator<ScanResult> oldest = SCANS.values().iterator();
        while (records > MAX_RECORDS && oldest.hasNext()) {
            records -= weight(oldest.next());
            oldest.remove();
        }
    }

    /** What a kept scan counts against MAX_RECORDS: its records, and at least one. */
    private static long weight(ScanResult scan) {
        return Math.max(1, scan.n());
    }
}
