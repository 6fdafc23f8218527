package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What identifies a file's bytes as stat says (path, inode, size,
 * modification and change times), for the caches that let this JVM skip
 * reading and checking a file it checked before ({@link SealedScans}: data
 * files' scans; the Spark layer's checked page files). Every write to a file
 * moves its modification and change times, and so does tampering, which
 * cannot set the change time back; a file replaced at the same path has
 * another inode. An identity is only had for a file last changed at least
 * {@link #SETTLED_NANOS} before the look: with times in whole seconds a write
 * in the same second as the look would not move them. Times come from the
 * clock of the host that wrote the file; a clock stepped back by more than
 * the margin could let a write in that window go unseen.
 *
 * <p>What a cache keyed by it gives up: bytes that rot on the disk after the
 * check, their times unchanged, are not checked again by this JVM (a new
 * executor, or any other reader, checks them at its first read).
 */
public record SettledFile(String path, Object inode, long size, long modifiedNanos, long changedNanos) {

    public static final long SETTLED_NANOS = TimeUnit.SECONDS.toNanos(2);

    /**
     * The identity of {@code path} now, or null when it changed too recently
     * for a check of it to be kept, is gone, or the file system gives no
     * inode or change time.
     */
    public static SettledFile of(Path path) throws IOException {
        long now = TimeUnit.MILLISECONDS.toNanos(System.currentTimeMillis());
        Map<String, Object> stat;
        try {
            stat = Files.readAttributes(path, "unix:ino,size,lastModifiedTime,ctime");
        } catch (UnsupportedOperationException | IllegalArgumentException noUnixView) {
            return null;
        } catch (NoSuchFileException gone) {
            return null;
        }
        long modified = nanos(stat.get("lastModifiedTime"));
        long changed = nanos(stat.get("ctime"));
        if (now - Math.max(modified, changed) < SETTLED_NANOS) {
            return null;
        }
        return new SettledFile(path.toAbsolutePath().toString(), stat.get("ino"), (Long) stat.get("size"),
                modified, changed);
    }

    private static long nanos(Object time) {
        return ((FileTime) time).to(TimeUnit.NANOSECONDS);
    }
}
