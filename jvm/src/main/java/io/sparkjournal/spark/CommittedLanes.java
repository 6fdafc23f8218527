package io.sparkjournal.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.sparkjournal.events.CommittedLane;
import io.sparkjournal.events.Resolver;

/**
 * The planner's view of the commit log's committed lanes (events.CommittedLane,
 * from a fresh view of the log), in (node, lane) order. A log that cannot be
 * read fails the plan (UncheckedIOException naming it): a read cannot know its
 * lanes without it.
 */
final class CommittedLanes {

    /** A committed lane, its count of committed batches and its node's (over all its lanes). */
    record Lane(String node, String host, String root, String lane, long batches, long nodeBatches) {
    }

    private CommittedLanes() {
    }

    static List<Lane> read(String logBase) {
        try {
            var view = Resolver.shared().commitLog(logBase).view();
            Map<String, Lane> sorted = new TreeMap<>();
            for (CommittedLane lane : CommittedLane.of(view).values()) {
                sorted.put(lane.node() + "\u0000" + lane.lane(), new Lane(lane.node(), lane.host(), lane.root(),
                        lane.lane(), lane.batches(), lane.nodeBatches()));
            }
            return new ArrayList<>(sorted.values());
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
