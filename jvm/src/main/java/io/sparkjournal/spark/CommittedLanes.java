package io.sparkjournal.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.sparkjournal.events.CommitLog;
import io.sparkjournal.events.CommittedLane;
import io.sparkjournal.events.Resolver;

/** The planner's view of the commit log's committed lanes (events.CommittedLane), in (node, lane) order. */
final class CommittedLanes {

    record Lane(String node, String host, String root, String lane, java.util.Set<?> batches) {
    }

    private CommittedLanes() {
    }

    static List<Lane> read(String logBase) {
        try {
            CommitLog log = Resolver.shared().commitLog(logBase);
            Map<String, Lane> sorted = new TreeMap<>();
            for (CommittedLane lane : CommittedLane.of(log).values()) {
                sorted.put(lane.node() + "\u0000" + lane.lane(), new Lane(lane.node(), lane.host(), lane.root(),
                        lane.lane(), lane.batches()));
            }
            return new ArrayList<>(sorted.values());
        } catch (IOException error) {
            throw new UncheckedIOException("cannot read the commit log " + logBase + ": " + error.getMessage(), error);
        }
    }

    /** One clause per node, as committed_lanes.describe_nodes: id, host, root, lanes, batches. */
    static String describe(List<Lane> lanes) {
        Map<String, List<Lane>> byNode = new TreeMap<>();
        for (Lane lane : lanes) {
            byNode.computeIfAbsent(lane.node(), key -> new ArrayList<>()).add(lane);
        }
        List<String> parts = new ArrayList<>();
        for (Map.Entry<String, List<Lane>> node : byNode.entrySet()) {
            List<String> names = new ArrayList<>();
            java.util.Set<Object> batches = new java.util.HashSet<>();
            for (Lane lane : node.getValue()) {
                names.add(lane.lane());
                batches.addAll(lane.batches());
            }
            Lane first = node.getValue().get(0);
            parts.add("node " + node.getKey() + " on host " + first.host() + ": root " + first.root() + ", lanes "
                    + String.join(", ", names) + ", holding " + batches.size() + " committed batches");
        }
        return String.join("; ", parts);
    }
}
