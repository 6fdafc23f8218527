package io.sparkjournal.events;

import io.sparkjournal.journal.AppendConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * An executor JVM's open lane writers, kept across tasks (as a Python worker
 * keeps its lane between tasks): a task takes an idle writer of its node
 * root (same appender configuration) or opens the first free lane, and gives it
 * back when its PREPARE is durable, so the next task pays no lane load (a
 * load checks every record's CRC: its cost grows with the lane). The JVM runs
 * several tasks at once, so each root has a pool of idle writers, one lane
 * each; a writer is never shared by two tasks. Idle writers are taken oldest
 * first: a root's kept writers take turns, so a batch that runs as many tasks
 * as there are kept writers touches every kept lane and ends the PREPAREs
 * decided there, even when its tasks run one after another (the driver cannot
 * end them: a lane held by an idle writer is out of its reach).
 *
 * <p>A lane held by an idle writer is closed to everyone else: maintenance
 * cannot carry out its requests there (deletes, pages), which the JVM writer
 * does not carry out itself. So a writer is released, and its lane left to
 * maintenance, when a task finds requests waiting in its lane (the task then
 * takes a lane without any, or a new one), and any writer idle for
 * laneIdleTimeout is released by a daemon thread.
 *
 * <p>A task that fails gives nothing back: its writer is closed ({@link #drop}),
 * and the next task opens the lane again from what is on disk.
 *
 * <p>Crash behaviour: every task's PREPARE was synced before its writer came
 * back, so releasing or losing an idle writer loses nothing; a JVM killed while
 * holding lanes releases their locks with its process.
 */
final class LaneWriters {

    private static final Logger LOG = Logger.getLogger("sparkjournal.task");

    private record Key(Path root, AppendConfig config) {
    }

    private record Idle(RootLanes.Opened opened, long since, long idleNanos) {
    }

    private static final Map<Key, Deque<Idle>> IDLE = new HashMap<>();
    private static Thread reaper;

    private LaneWriters() {
    }

    /** A writer of a lane of {@code root} for one task: an idle one whose lane has no
     *  request waiting, else the first free lane without one (a new lane if need be). */
    static RootLanes.Opened take(Path root, String host, AppendConfig config) throws IOException {
        List<RootLanes.Opened> release = new ArrayList<>();
        RootLanes.Opened found = null;
        synchronized (IDLE) {
            Deque<Idle> idle = IDLE.get(new Key(root, config));
            while (found == null && idle != null && !idle.isEmpty()) {
                RootLanes.Opened candidate = idle.pollFirst().opened();
                if (requestsWaiting(candidate.directory())) {
                    release.add(candidate);
                } else {
                    found = candidate;
                }
            }
        }
        for (RootLanes.Opened opened : release) {
            close(opened, "for the maintenance requests waiting in it");
        }
        if (found != null) {
            return found;                 // its node id came with it: NODE_ID is read at an open
        }
        return RootLanes.openWriter(root, RootLanes.nodeId(root, host), config,
                LaneWriters::requestsWaiting);
    }

    /** Gives a task's writer back, healthy, its PREPARE durable; released after
     *  {@code idleNanos} unused. */
    static void give(RootLanes.Opened opened, AppendConfig config, long idleNanos) {
        synchronized (IDLE) {
            IDLE.computeIfAbsent(new Key(opened.root(), config), key -> new ArrayDeque<>())
                    .addLast(new Idle(opened, System.nanoTime(), idleNanos));
            if (reaper == null) {
                reaper = new Thread(LaneWriters::releaseIdle, "sparkjournal-lane-reaper");
                reaper.setDaemon(true);
                reaper.start();
                Runtime.getRuntime().addShutdownHook(new Thread(LaneWriters::releaseAll,
                        "sparkjournal-lane-release"));
            }
        }
    }

    /** Closes a task's writer instead of giving it back (the task failed). */
    static void drop(RootLanes.Opened opened) {
        close(opened, "after a failed task");
    }

    /** Whether maintenance left requests in {@code lane} for its writer; unsure (the folder
     *  cannot be read): no, the request's carrier says what is wrong with it. */
    static boolean requestsWaiting(Path lane) {
        try {
            return LaneRequests.waiting(lane);
        } catch (IOException | RuntimeException unknown) {
            return false;
        }
    }

    private static void releaseIdle() {
        while (true) {
            List<RootLanes.Opened> release = new ArrayList<>();
            long wait = 1_000_000_000L;
            synchronized (IDLE) {
                long now = System.nanoTime();
                for (Deque<Idle> idle : IDLE.values()) {
                    for (Iterator<Idle> it = idle.iterator(); it.hasNext(); ) {
                        Idle writer = it.next();
                        if (now - writer.since() >= writer.idleNanos()) {
                            it.remove();
                            release.add(writer.opened());
                        } else {
                            wait = Math.min(wait, Math.max(writer.idleNanos() / 4, 50_000_000L));
                        }
                    }
                }
            }
            for (RootLanes.Opened opened : release) {
                close(opened, "idle for laneIdleTimeout");
            }
            try {
                Thread.sleep(wait / 1_000_000L);
            } catch (InterruptedException stop) {
                return;
            }
        }
    }

    private static void releaseAll() {
        List<RootLanes.Opened> release = new ArrayList<>();
        synchronized (IDLE) {
            for (Deque<Idle> idle : IDLE.values()) {
                idle.forEach(writer -> release.add(writer.opened()));
                idle.clear();
            }
        }
        release.forEach(opened -> close(opened, "at exit"));
    }

    private static void close(RootLanes.Opened opened, String why) {
        try {
            opened.close();
            LOG.info("task writer released " + opened.directory() + " " + why);
        } catch (IOException | RuntimeException failed) {
            LOG.log(Level.WARNING, "closing the lane writer " + opened.directory() + " " + why,
                    failed);
        }
    }
}
