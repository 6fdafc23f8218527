package io.sparkjournal.spark;

import java.util.LinkedHashMap;
import java.util.Map;

import io.sparkjournal.journal.SettledFile;

/**
 * The page files this JVM read whole and found holding the CRC-32C their
 * PAGE record gives ({@link PageFileCheck}), so that a page read again in the
 * same executor (the next query, a stream's next micro-batch) is not read
 * whole again: a read that wants two columns of a page otherwise reads every
 * byte of it before Spark's Parquet reader reads those two. A check is kept
 * per {@link SettledFile} identity (path, inode, size, times; settled) and
 * CRC: a page changed since, in place or replaced, has another identity and
 * is read whole and checked again; what is given up is what SettledFile says.
 * The footer is checked at every open, and Spark's Parquet reader still
 * checks each Parquet page's own checksum. At most {@link #MAX_FILES} checks
 * are kept; the least recently used go first. Nothing on disk is written.
 */
final class CheckedPages {

    static final int MAX_FILES = 1 << 14;

    private record Checked(SettledFile file, long crc32c) {
    }

    private static final Map<Checked, Boolean> CHECKED = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Checked, Boolean> eldest) {
            return size() > MAX_FILES;
        }
    };

    private CheckedPages() {
    }

    /** Whether this JVM found the file with this identity (null: none) holding {@code crc32c}. */
    static synchronized boolean contains(SettledFile file, long crc32c) {
        return file != null && CHECKED.get(new Checked(file, crc32c)) != null;
    }

    /** Keeps that the file with this identity (null: none, nothing kept) holds {@code crc32c}. */
    static synchronized void keep(SettledFile file, long crc32c) {
        if (file != null) {
            CHECKED.put(new Checked(file, crc32c), Boolean.TRUE);
        }
    }
}
