package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Set;

/**
 * Whether a lane has a live writer: the one that holds the lane's
 * {@code journal.lock} (FORMAT.md: a Python writer's flock and OFD write
 * lock; a JVM writer's {@link LaneWriterLock}: a POSIX record lock), all
 * dropped by the kernel when the holder dies. This reads the kernel's table
 * of held locks, {@code /proc/locks}, for an FLOCK, POSIX or OFDLCK entry on
 * that file's device and inode; a blocked waiter ("->") does not count. It
 * never takes the lock nor opens the file, so a writer opening the lane
 * meanwhile is never held up, a {@link LaneWriterLock} held in this JVM is
 * never dropped (closing any descriptor of the file would drop it), and a
 * Python writer's bare flock (where there are no OFD locks) is seen too.
 *
 * <p>Where the answer cannot be known ({@code /proc/locks} unreadable or
 * empty, the lock file unreadable) the writer counts as alive: the caller then
 * waits for the writer's transactions to end, which is slow at worst, never
 * wrong. An empty table is one a sandbox hides: the kernel's is never empty
 * here, as this JVM holds a lock of its own for its life, an exclusive record
 * lock on a temporary file it deleted at once, taken before the first read
 * (where it cannot be taken, a quiet machine's table is empty too, and
 * counts as unknown).
 */
public final class WriterProbe {

    public static final String LOCK_FILE = "journal.lock";
    private static final Path LOCKS = Path.of("/proc/locks");
    /** The /proc/locks entries of a writer: a Python writer's flock and OFD lock, a JVM's
     *  record lock. */
    private static final Set<String> HOLDER_KINDS = Set.of("FLOCK", "POSIX", "OFDLCK");
    /** This JVM's own lock (see the class), held open for its life; null: not taken. */
    private static FileChannel ownLock;
    private static boolean ownLockTried;

    private WriterProbe() {
    }

    /** True if some process holds {@code lane}'s writer lock now, or if that cannot be told. */
    public static boolean writerAlive(Path lane) {
        return held(lane.resolve(LOCK_FILE));
    }

    /** True if some process holds a lock on {@code lock} now (as above, for any of a lane's
     *  lock files, e.g. the maintenance lock compact.lock), or if that cannot be told. */
    public static boolean held(Path lock) {
        return held(lock, LOCKS);
    }

    /** {@link #held(Path)} read from the lock table {@code table} (tests give another). */
    static boolean held(Path lock, Path table) {
        long device;
        long inode;
        try {
            device = ((Number) Files.getAttribute(lock, "unix:dev")).longValue();
            inode = ((Number) Files.getAttribute(lock, "unix:ino")).longValue();
        } catch (NoSuchFileException never) {
            return false;                         // nobody ever opened the lock file
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException unknown) {
            return true;
        }
        List<String> held;
        try {
            holdOwnLock();
            held = Files.readAllLines(table);
        } catch (IOException unknown) {
            return true;
        }
        if (held.isEmpty()) {
            return true;                          // hidden: our own lock would show
        }
        String wanted = String.format("%02x:%02x:%d", major(device), minor(device), inode);
        for (String line : held) {
            String[] fields = line.trim().split("\\s+");
            // "1: FLOCK  ADVISORY  WRITE 32553 fe:00:2147739 0 EOF"; blocked waiters carry "->"
            if (fields.length >= 6 && HOLDER_KINDS.contains(fields[1])
                    && fields[5].equals(wanted)) {
                return true;
            }
        }
        return false;
    }

    /** Takes this JVM's own lock (see the class), tried once; where it cannot be taken
     *  an empty table also stands for a quiet machine, and still counts as unknown. */
    private static synchronized void holdOwnLock() {
        if (ownLockTried) {
            return;
        }
        ownLockTried = true;
        FileChannel channel = null;
        try {
            Path file = Files.createTempFile("sparkjournal-probe-", ".lock");
            try {
                channel = FileChannel.open(file, StandardOpenOption.WRITE);
            } finally {
                Files.deleteIfExists(file);           // the lock outlives the name
            }
            if (channel.tryLock() != null) {
                ownLock = channel;
                return;
            }
        } catch (IOException | RuntimeException notTaken) {
            // left untaken
        }
        try {
            if (channel != null) {
                channel.close();
            }
        } catch (IOException ignored) {
            // nothing held
        }
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
