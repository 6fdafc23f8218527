package io.sparkjournal.spark;

import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.logging.Logger;

import io.sparkjournal.events.ForgottenEvents;
import io.sparkjournal.events.ForgottenNode;
import io.sparkjournal.events.NodeIds;
import io.sparkjournal.events.RootLanes;
import io.sparkjournal.journal.LaneFiles;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkExecutorInfo;

/**
 * The lanes a read must reach, and where each one is, planned on the driver.
 *
 * Two sources, for the JVM and the Python reader alike: every
 * lane of every node root the driver sees (one machine, local-cluster, a
 * shared mount), and every lane the commit log names as holding committed
 * batches (by node id, host, root and lane), which on a cluster of separate
 * hosts the driver does not see. The log is read first: a lane a decision
 * names was written before it, so the listing after sees it.
 *
 * A lane's partition prefers the live executors on its node's host (matched
 * by name or address: Spark often knows executors by address). A committed
 * lane the driver does not see and no live executor's host holds would be a
 * silent hole in the result: planning waits for executors to register
 * ({@link PlacementWait}: the read option missingHostWait, 5s by default,
 * or longer while the application is younger than
 * {@code spark.scheduler.maxRegisteredResourcesWaitingTime}),
 * then fails naming node, host, root, lanes and batches, unless
 * {@code allowPartialRead} is set, when it reads the rest and logs exactly
 * what it left out. Preferences are not guarantees: the task checks the
 * lane's NODE_ID where it runs ({@link LaneRead}) and fails, for Spark to
 * retry, rather than read another node's lane.
 *
 * Forgotten nodes (COMMIT_LOG.md, "Forgotten nodes"): their lanes are neither
 * required nor waited for, and a root of one the driver sees is not read
 * (quarantined: a WARNING naming node, host and the restore command); the
 * events the log credits to them are logged as a WARNING on every plan and
 * returned with it, for the read's metrics.
 */
final class LanePlanner {

    private static final Logger LOG = Logger.getLogger("sparkjournal.read");
    private static final long POLL_MS = 500;

    private LanePlanner() {
    }

    /** A plan: the lanes to read, and what the view credits to forgotten nodes (not read). */
    record Planned(List<LanePartition> lanes, ForgottenEvents forgotten) {
    }

    static Planned plan(SparkContext sc, ReadOptions options, JournalSchema journal, String doing) {
        CommittedLanes.Found found = CommittedLanes.read(journal.logBase());
        List<CommittedLanes.Lane> committed = found.lanes();
        Map<String, String[]> seen = driverLanes(options.path());        // lane folder -> {lane name, node}
        quarantine(seen, found.forgotten(), options.path());
        Set<String> reached = new LinkedHashSet<>();
        for (String[] lane : seen.values()) {
            reached.add(lane[1] + "/" + lane[0]);
        }
        List<CommittedLanes.Lane> elsewhere = new ArrayList<>();
        for (CommittedLanes.Lane lane : committed) {
            if (!reached.contains(lane.node() + "/" + lane.lane())) {
                elsewhere.add(lane);
            }
        }
        Executors executors = Executors.waitFor(sc, elsewhere, options.missingHostWaitMs());
        List<LanePartition> planned = new ArrayList<>();
        for (Map.Entry<String, String[]> lane : seen.entrySet()) {
            String node = lane.getValue()[1];
            planned.add(new LanePartition(lane.getKey(), node, executors.on(hostOf(node))));
        }
        List<CommittedLanes.Lane> missing = new ArrayList<>();
        for (CommittedLanes.Lane lane : elsewhere) {
            String[] places = executors.on(lane.host());
            if (places.length == 0) {
                missing.add(lane);
            } else {
                planned.add(new LanePartition(lane.root() + "/" + lane.lane(), lane.node(), places));
            }
        }
        if (!missing.isEmpty()) {
            String what = CommittedLanes.describe(missing);
            if (!options.allowPartial()) {
                throw new OptionException(doing + " " + options.path() + ": nodes holding committed events cannot "
                        + "be reached, so the result would silently lack their events: " + what + " (no live "
                        + "executor on their host; live executors: " + executors + "). Bring the host back (a "
                        + "running Spark worker with the root mounted at the same path) and retry, or pass "
                        + "allowPartialRead=true to read the rest and get a report of what was left out");
            }
            LOG.warning("PARTIAL READ of " + options.path() + " by " + doing + ": left out " + what);
        }
        if (!found.forgottenEvents().nodes().isEmpty()) {
            LOG.warning(found.forgottenEvents().line(options.path()));
        }
        return new Planned(planned, found.forgottenEvents());
    }

    /** Leaves out of {@code seen} the lanes of forgotten nodes' roots, each such node logged once as
     *  quarantined on this host (the driver's: it sees those roots). */
    private static void quarantine(Map<String, String[]> seen, Set<String> forgotten, String path) {
        Set<String> found = new TreeSet<>();
        for (var lanes = seen.values().iterator(); lanes.hasNext(); ) {
            String node = lanes.next()[1];
            if (node != null && forgotten.contains(node)) {
                found.add(node);
                lanes.remove();
            }
        }
        for (String node : found) {
            LOG.warning(ForgottenNode.quarantined(path, node, List.of(RootLanes.hostName())));
        }
    }

    /** {lane folder: {lane name, node id or null}} of every root the driver sees, roots and lanes in order. */
    static Map<String, String[]> driverLanes(String path) {
        Map<String, String[]> lanes = new LinkedHashMap<>();
        for (Path root : NodeRoots.visible(path)) {
            String node;
            try {
                node = NodeIds.read(root);
            } catch (io.sparkjournal.events.NodeIdException damaged) {
                throw new java.io.UncheckedIOException(damaged);  // a damaged NODE_ID fails the read
            }
            TreeMap<Long, String> ordered = new TreeMap<>();
            try (DirectoryStream<Path> entries = Files.newDirectoryStream(root)) {
                for (Path entry : entries) {
                    var match = LaneFiles.LANE_FOLDER.matcher(entry.getFileName().toString());
                    if (match.matches() && Files.isDirectory(entry)) {
                        ordered.put(Long.parseLong(match.group(1)), entry.getFileName().toString());
                    }
                }
            } catch (IOException unreadable) {
                continue;                               // a root it cannot list has no lanes
            }
            for (String name : ordered.values()) {
                lanes.put(root.resolve(name).toString(), new String[] {name, node});
            }
        }
        return lanes;
    }

    static String hostOf(String node) {
        if (node == null) {
            return null;
        }
        String host = node.substring(node.lastIndexOf('@') + 1);
        return host.isEmpty() || !node.contains("@") ? null : host;
    }

    /** The live executors' hosts as the scheduler knows them, and which of them is a node's host. */
    static final class Executors {
        private final List<String> hosts;

        private Executors(List<String> hosts) {
            this.hosts = hosts;
        }

        static Executors now(SparkContext sc) {
            List<String> hosts = new ArrayList<>();
            for (SparkExecutorInfo info : sc.statusTracker().getExecutorInfos()) {
                if (!hosts.contains(info.host())) {
                    hosts.add(info.host());
                }
            }
            return new Executors(hosts);
        }

        /** Waits until every lane's host has a live executor, or the placement wait ends
         *  ({@link PlacementWait}: {@code waitMs} from now, or Spark's registration wait from the
         *  application's start). */
        static Executors waitFor(SparkContext sc, List<CommittedLanes.Lane> lanes, long waitMs) {
            long deadline = PlacementWait.deadlineMs(sc, waitMs);
            while (true) {
                Executors now = now(sc);
                boolean all = true;
                for (CommittedLanes.Lane lane : lanes) {
                    all &= now.on(lane.host()).length > 0;
                }
                if (all || System.currentTimeMillis() >= deadline) {
                    return now;
                }
                try {
                    Thread.sleep(POLL_MS);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    return now;
                }
            }
        }

        /** The executor hosts that are {@code host} (by name or by address). */
        String[] on(String host) {
            if (host == null) {
                return new String[0];
            }
            List<String> found = new ArrayList<>();
            for (String candidate : hosts) {
                if (sameHost(host, candidate)) {
                    found.add(candidate);
                }
            }
            return found.toArray(new String[0]);
        }

        @Override
        public String toString() {
            return hosts.isEmpty() ? "none" : String.join(", ", hosts);
        }
    }

    static boolean sameHost(String name, String executorHost) {
        if (name.equalsIgnoreCase(executorHost)) {
            return true;
        }
        try {
            Set<InetAddress> named = Set.of(InetAddress.getAllByName(name));
            for (InetAddress address : InetAddress.getAllByName(executorHost)) {
                if (named.contains(address)) {
                    return true;
                }
            }
        } catch (UnknownHostException | IllegalArgumentException unresolved) {
            return false;
        }
        return false;
    }
}
