package io.sparkjournal.events;

import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.DiskModes;
import io.sparkjournal.journal.LaneWriterLock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * A commit log's checkpoint, then its retention, under its checkpoint lock:
 * COMMIT_LOG.md, "Checkpoints" and "Retention" ({@link LogCheckpointWriter},
 * {@link LogRetention}). The checkpoint is renewed, with nothing new to fold,
 * when the newest is older than {@code commitLogRetainTime}.
 *
 * <p>The lock, {@code _checkpoints/checkpoint.lock}, is tried, never waited
 * for: a writer that finds it held leaves both to the holder (COMMIT_LOG.md,
 * "Checkpoints"). A Python writer takes an flock on it, which a JDK lock never
 * meets, and beside it an OFD write lock over the whole file; the JVM takes a
 * POSIX record lock over the whole file
 * ({@link LaneWriterLock#tryAcquire(Path, String)}, as for a lane's
 * journal.lock), which refuses and is refused by that OFD lock, and within
 * this JVM a registry of the files held. Where the kernel has no OFD locks a
 * Python writer holds the flock alone and the two do not exclude each other:
 * then the spec's rule stands in, that racing checkpointers are safe (they build
 * the same folds; the loser of the exclusive create finds the name taken and
 * leaves the winner's checkpoint; retention deletes only what two
 * checkpoints cover, after their commit times are on disk).
 *
 * <p>Crash behaviour: the lock dies with the JVM. Killed between writing the
 * commit times and linking the checkpoint, only segments were extended (no
 * checkpoint covers those batches yet, so nobody reads them there) and a
 * {@code *.tmp} may be left, which retention removes after an hour; killed
 * while deleting, some covered entries are gone and some not, every reader's
 * view is the same either way, and the next retention finishes.
 */
public final class LogMaintenance {

    static final String LOCK_FILE = "checkpoint.lock";

    /** What one run did: the checkpoint created (null: none), entries folded, files deleted;
     *  {@code skipped}: why nothing was done ("" when it ran). */
    public record Result(String checkpoint, int folded, int deletedEntries, int deletedCheckpoints,
                         int deletedTmp, long nanos, String skipped) {

        /** The maintenance's log line, worded as the Python driver's. */
        public String line() {
            if (!skipped.isEmpty()) {
                return "commit log: no checkpoint or retention: " + skipped;
            }
            String made = checkpoint != null ? "checkpoint " + checkpoint + " folded " + folded + " entries"
                    : "no new checkpoint";
            return "commit log: " + made + "; retention deleted " + deletedEntries + " entries, "
                    + deletedCheckpoints + " old checkpoints, " + deletedTmp + " stale temporary files ("
                    + TimeUnit.NANOSECONDS.toMillis(nanos) + " ms)";
        }
    }

    private LogMaintenance() {
    }

    /** A checkpoint then retention now (see the class). */
    public static Result maintain(CommitLog log, long retainBatches, long retainNanos)
            throws EventsException, FormatVersionException {
        Instant now = Instant.now();
        return maintain(log, retainBatches, retainNanos,
                TimeUnit.SECONDS.toNanos(now.getEpochSecond()) + now.getNano());
    }

    /** A checkpoint then retention at {@code nowNanos} (ns since the epoch; see the class). */
    static Result maintain(CommitLog log, long retainBatches, long retainNanos, long nowNanos)
            throws EventsException, FormatVersionException {
        long started = System.nanoTime();
        LaneWriterLock lock = lock(log);
        if (lock == null) {
            return new Result(null, 0, 0, 0, 0, 0, "another process is checkpointing this log");
        }
        try (lock) {
            long nowMs = TimeUnit.NANOSECONDS.toMillis(nowNanos);
            LogCheckpointWriter.Made made = LogCheckpointWriter.checkpoint(log, nowMs,
                    TimeUnit.NANOSECONDS.toMillis(nowNanos - retainNanos));
            LogRetention.Deleted deleted = LogRetention.expire(log, retainBatches, retainNanos, nowNanos);
            return new Result(made.name(), made.folded(), deleted.entries(), deleted.checkpoints(),
                    deleted.tmp(), System.nanoTime() - started, "");
        } catch (EventsException | FormatVersionException failed) {
            throw failed;                              // the lock released, its own failure suppressed
        } catch (IOException releasing) {
            throw new CommitLogException("cannot release " + LOCK_FILE + " of " + log + ": " + releasing, releasing);
        }
    }

    /** The log's checkpoint lock held, or null if another holds it (see the class). */
    static LaneWriterLock lock(CommitLog log) throws CommitLogException {
        Path folder = Paths.get(log.base(), Checkpoints.FOLDER);
        try {
            if (!Files.isDirectory(folder)) {
                DiskModes.makeDirs(folder);
            }
            return LaneWriterLock.tryAcquire(folder, LOCK_FILE);
        } catch (IOException error) {
            throw new CommitLogException("cannot take " + folder + "/" + LOCK_FILE + ": " + error, error);
        }
    }
}
