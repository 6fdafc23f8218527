package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;

/**
 * A JVM writer's hold on a lane's one-writer lock, {@code journal.lock}
 * (FORMAT.md, "A journal (lane) directory"): while it is held no other
 * writer, Python or JVM, in this process or another, opens the lane.
 *
 * <p>The JDK cannot take an flock: {@link FileChannel#tryLock} takes a POSIX
 * record lock (fcntl), which on Linux does not meet flock. So the JVM holds an
 * exclusive record lock over the whole file, and a Python writer holds, beside
 * its flock, an open-file-description write lock over the whole file
 * (F_OFD_SETLK), which refuses a record lock of another process and is refused
 * by one. Whoever holds the lock writes {@code <pid>\n} into the file, which
 * the "lane has a writer already" error of either writer names.
 *
 * <p>Contract: record locks belong to the process, and closing ANY descriptor
 * of the file in this JVM drops them all. So this class is the only code in
 * the JVM that ever opens {@code journal.lock} ({@link WriterProbe} only stats
 * it), and within this JVM a lane held already is refused from a registry of
 * the lock files held (keyed by real path), before any channel is opened:
 * a second {@link #tryAcquire} of a lane, on any thread, returns null until the
 * first hold is closed.
 *
 * <p>Where the kernel or filesystem has no OFD locks a Python writer holds the
 * flock alone, which this lock does not see: the one-writer rule between a
 * Python and a JVM writer of one lane then rests on no lock.
 *
 * <p>Crash behaviour: the lock dies with the JVM, however it dies; a killed
 * writer never leaves its lane locked. The pid left in the file is then stale
 * and is overwritten by the next holder.
 */
public final class LaneWriterLock implements AutoCloseable {

    public static final String NAME = WriterProbe.LOCK_FILE;

    private static final Set<Path> HELD = new HashSet<>();
    private static final Set<StandardOpenOption> OPEN = EnumSet.of(
            StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);

    private final Path key;
    private final FileChannel channel;
    private boolean closed;

    private LaneWriterLock(Path key, FileChannel channel) {
        this.key = key;
        this.channel = channel;
    }

    /**
     * Takes {@code lane}'s writer lock without waiting: the held lock, or null
     * when another writer (another process, Python or JVM, or another hold in
     * this JVM) holds it. Creates {@code journal.lock} (with the fileMode
     * {@link DiskModes#forPath} gives it, less the umask) when the lane has none.
     */
    public static LaneWriterLock tryAcquire(Path lane) throws IOException {
        return tryAcquire(lane, NAME);
    }

    /**
     * The same lock over another lock file, {@code folder/name}, whose other
     * takers hold an flock and an OFD write lock as a lane's Python writer does:
     * the commit log's {@code _checkpoints/checkpoint.lock} (COMMIT_LOG.md,
     * "Checkpoints")
     * ({@code io.sparkjournal.events.LogMaintenance}). The contract above holds
     * for it: only this class opens it in the JVM.
     */
    public static LaneWriterLock tryAcquire(Path folder, String name) throws IOException {
        Path lock = folder.resolve(name);
        synchronized (HELD) {
            if (HELD.contains(realPath(folder, lock, name))) {
                return null;
            }
            FileChannel channel = FileChannel.open(lock, OPEN, DiskModes.fileAttribute(lock));
            try {
                FileLock held = channel.tryLock(0, Long.MAX_VALUE, false);
                if (held == null) {
                    channel.close();
                    return null;
                }
                channel.truncate(0);
                ByteBuffer pid = ByteBuffer.wrap(
                        (ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII));
                while (pid.hasRemaining()) {
                    channel.write(pid, pid.position());
                }
                Path key = lock.toRealPath();
                HELD.add(key);
                return new LaneWriterLock(key, channel);
            } catch (IOException | RuntimeException failed) {
                channel.close();
                throw failed;
            }
        }
    }

    /** The lock file's real path; where there is none yet, the lane's real path and its name. */
    private static Path realPath(Path folder, Path lock, String name) throws IOException {
        try {
            return lock.toRealPath();
        } catch (NoSuchFileException absent) {
            return folder.toRealPath().resolve(name);
        }
    }

    /** Releases the lock and closes the file; idempotent. */
    @Override
    public void close() throws IOException {
        synchronized (HELD) {
            if (closed) {
                return;
            }
            closed = true;
            HELD.remove(key);
            channel.close();                 // releases the record lock
        }
    }
}
