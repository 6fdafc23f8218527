package io.sparkjournal.events;

import java.util.HashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.logging.Logger;

/**
 * The driver's checkpointer of one commit log (COMMIT_LOG.md, "Checkpoints"):
 * after each decision
 * ({@link #afterDecision}) it runs {@link LogMaintenance#maintain} in a daemon
 * thread of its own once {@code commitLogCheckpointInterval} decided batches
 * (the entries in the view past its checkpoint) are past the newest
 * checkpoint; never on the batch's path. One run at a time per log in this
 * JVM ({@link #forLog}: one checkpointer per log folder), one per log across
 * processes (the checkpoint lock); a decision that asks while a run is under
 * way makes that thread run once more when it ends, so the last decisions of
 * a burst are folded too. A failure is logged as a WARNING and the
 * next decision tries again; it never fails a batch. Thread-safe.
 */
public final class LogCheckpointer {

    private static final Logger LOG = Logger.getLogger("sparkjournal.commitlog");
    private static final Map<String, LogCheckpointer> BY_LOG = new HashMap<>();

    private final CommitLog log;
    private Thread running;               // null when no run is under way (cleared by the thread)
    private long[] again;                 // {retainBatches, retainNanos} of a run asked meanwhile
    private volatile LogMaintenance.Result last;

    private LogCheckpointer(CommitLog log) {
        this.log = log;
    }

    /** The one checkpointer of the log at {@code log}'s folder in this JVM. */
    public static LogCheckpointer forLog(CommitLog log) {
        synchronized (BY_LOG) {
            return BY_LOG.computeIfAbsent(log.base(), base -> new LogCheckpointer(log));
        }
    }

    /** The entries of {@code view} past its checkpoint: the decided batches a checkpoint would fold
     *  (abort entries among them). */
    public static int entriesPastCheckpoint(LogView view) {
        int count = 0;
        for (NavigableMap<Long, Decision> entries : view.entries().values()) {
            count += entries.size();
        }
        return count;
    }

    /**
     * Starts a run when {@code interval} (0: never) or more entries are past
     * the newest checkpoint and no run of this log is under way; the thread
     * started, or null.
     */
    public synchronized Thread afterDecision(int entriesPastCheckpoint, long interval, long retainBatches,
                                             long retainNanos) {
        if (interval <= 0 || entriesPastCheckpoint < interval) {
            return null;
        }
        if (running != null) {
            again = new long[] {retainBatches, retainNanos};
            return null;
        }
        running = new Thread(() -> runs(retainBatches, retainNanos), "sparkjournal-log-checkpoint");
        running.setDaemon(true);
        running.start();
        return running;
    }

    /** What the last run did, or null before one ended. */
    public LogMaintenance.Result last() {
        return last;
    }

    /** Runs, then once more for each run asked meanwhile; clears {@code running} at the end. */
    private void runs(long retainBatches, long retainNanos) {
        long[] options = {retainBatches, retainNanos};
        boolean ended = false;
        try {
            while (options != null) {
                run(options[0], options[1]);
                synchronized (this) {
                    options = again;
                    again = null;
                    if (options == null) {
                        running = null;
                        ended = true;
                    }
                }
            }
        } finally {
            if (!ended) {                     // an Error out of a run: the next decision starts anew
                synchronized (this) {
                    running = null;
                    again = null;
                }
            }
        }
    }

    private void run(long retainBatches, long retainNanos) {
        try {
            last = LogMaintenance.maintain(log, retainBatches, retainNanos);
            LOG.info(last.line());
        } catch (Exception | LinkageError error) {
            LOG.warning("commit log " + log.uri() + ": checkpoint or retention failed (" + error
                    + "); the next decided batch tries again");
        }
    }
}
