package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * A JVM reader's hold on a lane's file-set lock, {@code files.lock}
 * (FORMAT.md, "A journal (lane) directory"): while any snapshot of the lane in
 * this JVM is open, no compaction swap or writer's reclaim replaces the files
 * it mapped.
 *
 * <p>The JDK cannot take an flock: {@link FileChannel#lock} takes a POSIX
 * record lock (fcntl), which on Linux does not meet flock. So the JVM holds a
 * shared record lock over the whole file, and whoever takes the file-set lock
 * exclusive (a Python writer or maintenance process) takes both the flock and
 * an open-file-description record lock for writing (F_OFD_SETLK), which a
 * shared record lock held by another process refuses. Those exclusive takers
 * never wait for it while holding the flock: they poll, as they do for
 * readers holding the flock shared.
 *
 * <p>Record locks belong to the process, and closing any channel of the file
 * drops them all; so one channel per lane per JVM holds the lock, shared by
 * every open snapshot of that lane (executor threads reading the same lane
 * take it once) and closed with the last one. The lane is known by its lock
 * file's real path: two spellings of one lane (a symbolic link in a parent
 * folder, {@code ..}) share the one channel, where a second channel would
 * fail the second read (the JDK refuses a second lock of a file it locked)
 * or, closed, drop the first's lock.
 *
 * <p>A lane without {@code files.lock} never had a writer (a writer makes it
 * when it opens the lane, before its first record), so nobody changes its
 * files: it is read without a lock, as is a lane where the lock file cannot be
 * made. A lock file this process may not read is the same case.
 *
 * <p>Crash behaviour: the lock dies with the JVM; a killed executor never
 * leaves a lane locked.
 */
final class FileSetLock implements AutoCloseable {

    static final String NAME = "files.lock";

    private static final Map<Path, Held> HELD = new HashMap<>();

    /** The one channel and lock of a lane in this JVM, and how many snapshots use it. */
    private static final class Held {
        final FileChannel channel;
        int users;

        Held(FileChannel channel) {
            this.channel = channel;
        }
    }

    private final Path key;          // null: the lane needs no lock
    private boolean closed;

    private FileSetLock(Path key) {
        this.key = key;
    }

    /**
     * Holds {@code lane}'s file-set lock shared; waits out a swap or reclaim in
     * progress (they hold it exclusive for milliseconds; the wait holds up
     * other lanes' first snapshots in this JVM meanwhile).
     */
    static FileSetLock holdForReading(Path lane) throws IOException {
        Path key;
        try {
            key = lane.resolve(NAME).toRealPath();
        } catch (NoSuchFileException | AccessDeniedException noLock) {
            return new FileSetLock(null);
        }
        synchronized (HELD) {
            Held held = HELD.get(key);
            if (held == null) {
                FileChannel channel;
                try {
                    channel = FileChannel.open(key, StandardOpenOption.READ);
                } catch (NoSuchFileException | AccessDeniedException noLock) {
                    return new FileSetLock(null);
                }
                try {
                    FileLock ignored = channel.lock(0, Long.MAX_VALUE, true);
                } catch (IOException | RuntimeException failed) {
                    channel.close();
                    throw failed;
                }
                held = new Held(channel);
                HELD.put(key, held);
            }
            held.users++;
            return new FileSetLock(key);
        }
    }

    /** Lets go of this hold; the lock is released with the lane's last one. Idempotent. */
    @Override
    public void close() throws IOException {
        if (key == null) {
            return;
        }
        synchronized (HELD) {
            if (closed) {
                return;
            }
            closed = true;
            Held held = HELD.get(key);
            if (--held.users == 0) {
                HELD.remove(key);
                held.channel.close();            // releases the record lock
            }
        }
    }
}
