package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Whether a lane has a live writer: the one-writer rule is an exclusive
 * {@code flock} on the lane's {@code journal.lock} (Python's journal/lock.py),
 * dropped by the kernel when the holder dies. The JDK cannot take or test an
 * flock (its FileChannel locks are fcntl locks, which Linux keeps apart), so
 * this reads the kernel's table of held locks, {@code /proc/locks}, for an
 * FLOCK on that file's device and inode. It never takes the lock, so a writer
 * opening the lane meanwhile is never held up.
 *
 * <p>Where the answer cannot be known ({@code /proc/locks} unreadable, the
 * lock file unreadable) the writer counts as alive: the caller then waits for
 * the writer's transactions to end, which is slow at worst, never wrong.
 */
public final class WriterProbe {

    public static final String LOCK_FILE = "journal.lock";
    private static final Path LOCKS = Path.of("/proc/locks");

    private WriterProbe() {
    }

    /** True if some process holds {@code lane}'s writer lock now, or if that cannot be told. */
    public static boolean writerAlive(Path lane) {
        Path lock = lane.resolve(LOCK_FILE);
        long device;
        long inode;
        try {
            device = ((Number) Files.getAttribute(lock, "unix:dev")).longValue();
            inode = ((Number) Files.getAttribute(lock, "unix:ino")).longValue();
        } catch (NoSuchFileException never) {
            return false;                         // no writer ever opened the lane
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException unknown) {
            return true;
        }
        List<String> held;
        try {
            held = Files.readAllLines(LOCKS);
        } catch (IOException unknown) {
            return true;
        }
        String wanted = String.format("%02x:%02x:%d", major(device), minor(device), inode);
        for (String line : held) {
            String[] fields = line.trim().split("\\s+");
            // "1: FLOCK  ADVISORY  WRITE 32553 fe:00:2147739 0 EOF"; blocked waiters carry "->"
            if (fields.length >= 6 && fields[1].equals("FLOCK") && fields[5].equals(wanted)) {
                return true;
            }
        }
        return false;
    }

    /** Linux's major(dev) of a 64-bit st_dev. */
    static long major(long dev) {
        return ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & ~0xfffL);
    }

    /** Linux's minor(dev) of a 64-bit st_dev. */
    static long minor(long dev) {
        return (dev & 0xffL) | ((dev >>> 12) & ~0xffL);
    }
}
