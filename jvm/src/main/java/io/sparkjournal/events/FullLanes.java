package io.sparkjournal.events;

import io.sparkjournal.journal.LaneBytes;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.logging.Logger;

/**
 * What a JVM task does when its lane is full: {@code addressFullPolicy} with
 * {@code maxSizeBytes} (the lane) and {@code maxRootSizeBytes} (the lanes of
 * its node root together), sized by {@link LaneBytes}, as the options'
 * declaration in config.py says and Python's maintenance/full_policy.py does.
 * Asked once per task, after its lane is taken and before its first record,
 * never in the middle of a transaction: a task's rows land whole or not at
 * all, and a lane ends up over its limit by at most the tasks admitted while
 * it was under.
 * <ul>
 *   <li>PAGE: the task writes (the paging job moves the oldest events out);
 *       logged once per episode, until the lane is under its limit again;</li>
 *   <li>FAIL: {@link JournalFullException} naming the batch, host, lane, size
 *       and limit; nothing was appended;</li>
 *   <li>DROP: the task writes nothing and its message counts the rows it
 *       dropped; logged when the lane turns full, then every 30 s at most;</li>
 *   <li>BLOCK: the task waits until there is space. Space is freed by
 *       maintenance (compaction, paging, retention, deletes), and the JVM
 *       writer does not carry out a lane's requests nor free dead files, so
 *       a waiting task gives its lane up ({@link TaskWrite}) for maintenance
 *       to take (a pass carries out the lane's deletes and pages; the open
 *       of the next pass, or compaction, frees the files they left dead),
 *       polls every half second, and takes a lane again once there is
 *       space: a waiting writer never keeps the space it waits for.</li>
 * </ul>
 * Crash behaviour: nothing is appended before admission; a task killed while
 * it waits holds no lane and leaves nothing.
 */
public final class FullLanes {

    private static final Logger LOG = Logger.getLogger("sparkjournal.full");
    static final long POLL_MS = 500;
    private static final long LOG_EVERY_NS = 30_000_000_000L;
    private static final Map<String, Long> EPISODES = new HashMap<>();   // lane|policy -> logged

    /** The limits of a write: -1 for none; the policy PAGE, BLOCK, DROP or FAIL. */
    public record Limits(long maxSizeBytes, long maxRootSizeBytes, String policy) {
        public static final Limits NONE = new Limits(-1, -1, "PAGE");

        boolean any() {
            return maxSizeBytes >= 0 || maxRootSizeBytes >= 0;
        }
    }

    /** A lane over a limit: which limit (its option's name), by how much, and what to do. */
    public record Full(Path lane, long size, long limit, String key, Path root) {
        String message() {
            String what = root == null ? "lane " + lane + " holds " + size + " bytes"
                    : "the lanes of node root " + root + " (with lane " + lane + ") hold " + size
                    + " bytes";
            return what + " of data files and large bodies, over " + key + " " + limit
                    + ". Free space: run jobs/page.py (or `sparkjournal page`) to move the oldest"
                    + " events to page files, or jobs/compact.py (or `sparkjournal compact`) to"
                    + " reclaim dead records (set retention to make old events dead, or"
                    + " sparkjournal.delete events); or raise " + key;
        }
    }

    /** A write into a full lane under addressFullPolicy=FAIL: nothing was written. */
    public static final class JournalFullException extends TaskWrite.SinkTaskException {
        private static final long serialVersionUID = 1L;

        JournalFullException(String where, Full full) {
            super(where + ": nothing written, addressFullPolicy is FAIL"
                    + " and the lane is full: " + full.message(), null);
        }
    }

    /** What the task does: write, drop its rows, or wait for space (BLOCK). */
    enum Verdict { WRITE, DROP, WAIT }

    private FullLanes() {
    }

    /** The limit {@code lane} of node root {@code root} is over, or null (a lane is full once it
     *  holds more than the limit). */
    static Full check(Path root, Path lane, Limits limits) throws IOException {
        if (limits.maxSizeBytes() >= 0) {
            long size = LaneBytes.lane(lane);
            if (size > limits.maxSizeBytes()) {
                return new Full(lane, size, limits.maxSizeBytes(), "maxSizeBytes", null);
            }
        }
        if (limits.maxRootSizeBytes() >= 0) {
            boolean inRoot = LaneBytes.isLaneOf(root, lane);
            long size = inRoot ? LaneBytes.root(root) : LaneBytes.lane(lane);
            if (size > limits.maxRootSizeBytes()) {
                return new Full(lane, size, limits.maxRootSizeBytes(), "maxRootSizeBytes",
                        inRoot ? root : lane);
            }
        }
        return null;
    }

    /** The verdict for the task {@code where} wants to write into {@code lane} (see the class);
     *  throws {@link JournalFullException} under FAIL. WAIT: give the lane up and
     *  {@link #waitForSpace}. */
    static Verdict admit(Path root, Path lane, Limits limits, String where) throws IOException {
        if (!limits.any()) {
            return Verdict.WRITE;
        }
        Full full = check(root, lane, limits);
        if (full == null) {
            endEpisode(lane);
            return Verdict.WRITE;
        }
        switch (limits.policy()) {
            case "FAIL":
                throw new JournalFullException(where, full);
            case "PAGE":
                if (due(lane, "PAGE", Long.MAX_VALUE)) {
                    LOG.warning(full.message() + "; addressFullPolicy is PAGE: writing on, the paging"
                            + " job moves the oldest events out (logged once until the lane is under"
                            + " its limit)");
                }
                return Verdict.WRITE;
            case "DROP":
                if (due(lane, "DROP", LOG_EVERY_NS)) {
                    LOG.warning(full.message() + "; addressFullPolicy is DROP: the events of " + where
                            + " and of every later write until there is space are dropped (counted"
                            + " in the batch metrics)");
                }
                return Verdict.DROP;
            default:
                LOG.warning(full.message() + "; addressFullPolicy is BLOCK: " + where + " gives the"
                        + " lane up to maintenance and waits until space is freed");
                return Verdict.WAIT;
        }
    }

    /** Blocks, holding no lane, until {@code lane} is no longer full (BLOCK); polls every
     *  {@link #POLL_MS}, logging every 30 s. An interrupt (Spark killing the task) ends the
     *  wait with an IOException naming it. */
    static void waitForSpace(Path root, Path lane, Limits limits, String where) throws IOException {
        long started = System.nanoTime();
        long logged = started;
        while (true) {
            Full full = check(root, lane, limits);
            if (full == null) {
                LOG.warning("lane " + lane + " has space again after "
                        + String.format("%.1f", (System.nanoTime() - started) / 1e9) + "s: " + where
                        + " writes");
                endEpisode(lane);
                return;
            }
            long now = System.nanoTime();
            if (now - logged >= LOG_EVERY_NS) {
                logged = now;
                LOG.warning(where + " is still waiting after " + (now - started) / 1_000_000_000L
                        + "s: " + full.message());
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new java.io.InterruptedIOException(where + ": interrupted while waiting for"
                        + " space in the full lane " + lane + " (addressFullPolicy BLOCK); nothing"
                        + " was written");
            }
        }
    }

    /** Whether to log a lane full under a policy now: at an episode's start, then every
     *  {@code everyNs}. */
    private static boolean due(Path lane, String policy, long everyNs) {
        long now = System.nanoTime();
        String key = lane.toAbsolutePath() + "|" + policy;
        synchronized (EPISODES) {
            Long last = EPISODES.get(key);
            if (last != null && now - last < everyNs) {
                return false;
            }
            EPISODES.put(key, now);
            return true;
        }
    }

    /** The lane is under its limits: the next time it is full is a new episode. */
    private static void endEpisode(Path lane) {
        String prefix = lane.toAbsolutePath() + "|";
        synchronized (EPISODES) {
            EPISODES.keySet().removeIf(key -> key.startsWith(prefix));
        }
    }
}
