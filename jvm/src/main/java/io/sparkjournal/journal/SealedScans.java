package io.sparkjournal.journal;

import io.sparkjournal.format.ScanResult;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

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
 * and only for a file last modified at least {@link #SETTLED_NANOS} before
 * the scan looked at it. It is reused for a file with the same path, inode,
 * file id, size, modification and change times. Every later write to a data
 * file moves its modification and change times (a header rewritten for reuse
 * from the pool, which also gives it another file id; zero-filling), and so
 * does tampering, which cannot set the change time back; a file replaced at
 * the same path has another inode. The settling margin covers file systems
 * whose times are coarse: with times in whole seconds a write in the same
 * second as the look would not move them. Times come from the clock of the
 * host that wrote the file; a clock stepped back by more than the margin
 * could let a write in that window go unseen.
 *
 * <p>What is given up: a sealed file's bytes that rot on the disk after this
 * JVM checked them, their times unchanged, are not checked again by this JVM
 * (a new executor, or any other reader, checks them at its first load).
 * Nothing on disk is written here. At most {@link #MAX_RECORDS} records'
 * scans are kept; the least recently used go first.
 */
final class SealedScans {

    static final long SETTLED_NANOS = TimeUnit.SECONDS.toNanos(2);
    static final long MAX_RECORDS = 1 << 20;

    /** What identifies a data file's bytes, as stat and its header say. */
    record Identity(String path, Object inode, long fileId, long size, long modifiedNanos,
                    long changedNanos) {
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
        long now = TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis());
        Map<String, Object> stat;
        try {
            stat = Files.readAttributes(path, "unix:ino,size,lastModifiedTime,ctime");
        } catch (UnsupportedOperationException | IllegalArgumentException noUnixView) {
            return null;                        // no inode or change time here: nothing is kept
        } catch (NoSuchFileException gone) {
            return null;                        // removed since it was mapped: scan the mapping
        }
        long modified = nanos(stat.get("lastModifiedTime"));
        long changed = nanos(stat.get("ctime"));
        if (now - Math.max(modified, changed) < SETTLED_NANOS) {
            return null;
        }
        return new Identity(path.toAbsolutePath().toString(), stat.get("ino"), fileId,
                (Long) stat.get("size"), modified, changed);
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

    private static long nanos(Object time) {
        return ((FileTime) time).to(TimeUnit.NANOSECONDS);
    }
}
