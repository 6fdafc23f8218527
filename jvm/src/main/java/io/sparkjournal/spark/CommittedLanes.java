package io.sparkjournal.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.sparkjournal.events.CommittedLane;
import io.sparkjournal.events.ForgottenEvents;
import io.sparkjournal.events.Resolver;

/**
 * The planner's view of the commit log's committed lanes (events.CommittedLane,
 * from a fresh view of the log), in (node, lane) order, with the nodes
 * forgotten in that same view (whose lanes are not among them: no read
 * requires them) and what the view credits to those ({@link ForgottenEvents}).
 * A log that cannot be read, or a damaged forgotten node record, fails the
 * plan (UncheckedIOException naming it): a read cannot know its lanes without
 * it.
 */
final class CommittedLanes {

    /** A committed lane, its count of committed batches and its node's (over all its lanes). */
    record Lane(String node, String host, String root, String lane, long batches, long nodeBatches) {
    }

    /** The committed lanes of one view, its forgotten nodes' ids and their events. */
    record Found(List<Lane> lanes, Set<String> forgotten, ForgottenEvents forgottenEvents) {
    }

    private CommittedLanes() {
    }

    static Found read(String logBase) {
        try {
            var view = Resolver.shared().commitLog(logBase).view();
            Map<String, Lane> sorted = new TreeMap<>();
            for (CommittedLane lane : CommittedLane.of(view).values()) {
                sorted.put(lane.node() + "\u0000" + lane.lane(), new Lane(lane.node(), lane.host(), lane.root(),
                        lane.lane(), lane.batches(), lane.nodeBatches()));
            }
            return new Found(new ArrayList<>(sorted.values()), Set.copyOf(view.forgotten().keySet()),
                    ForgottenEvents.of(view));
        } catch (IOException error) {
            throw new UncheckedIOException("cannot read the commit log " + logBase + ": " + error.getMessage(), error);
        }
    }

    /** One clause per node: id, host, root, the given lanes, and the committed batches the node holds. */
    static String describe(List<Lane> lanes) {
        Map<String, List<Lane>> byNode = new TreeMap<>();
        for (Lane lane : lanes) {
            byNode.computeIfAbsent(lane.node(), key -> new ArrayList<>()).add(lane);
        }
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, List<Lane>> node : byNode.entrySet()) {
            List<String> names = new ArrayList<>();
            for (Lane lane : node.getValue()) {
                names.add(lane.lane());
            }
            Lane first = node.getValue().get(0);
            parts.add("node " + node.getKey() + " on host " + first.host() + ": root " + first.root() + ", lanes "
                    + String.join(", ", names) + ", holding " + first.nodeBatches() + " committed batches");
        }
        return String.join("; ", parts);
    }
}
