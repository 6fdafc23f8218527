package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.format.Constants;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;

/**
 * A lane that holds committed data, known from the commit log alone: every
 * commit entry names its transactions by node id, host, root and lane, so the
 * lanes of a {@link LogView} (its checkpoint's, then those the entries after
 * it name) are the lanes a complete read must reach, each with its count of
 * committed batches and its node's.
 *
 * <p>Conservative: a lane whose committed events were all deleted since is
 * still named (the log is never rewritten); a batch with a commit entry is
 * always counted. An abort entry commits nothing and names no lane.
 */
public final class CommittedLane {

    /** A lane's identity: the node id of its root and the lane folder's name. */
    public record Key(String node, String lane) {
    }

    private final String node;
    private final String host;
    private final String root;
    private final String lane;
    private long batches;
    private long nodeBatches;

    private CommittedLane(String node, String host, String root, String lane, long batches) {
        this.node = node;
        this.host = host;
        this.root = root;
        this.lane = lane;
        this.batches = batches;
    }

    /**
     * Every lane of {@code view}, by key: the checkpoint's lanes in (node,
     * lane) order with their counts, then lanes first named by the entries
     * after it (queries in code point order, batches ascending, txs as
     * listed), abort entries skipped. Each commit entry adds its batch once
     * to every lane it names and once to every node it names. A lane the checkpoint does not know takes host
     * and root from the first tx naming it: "host" if truthy, else the part of
     * the node id after its last '@'; "root" if truthy, else "". The lanes of
     * the view's forgotten nodes ({@link LogView#forgotten}) are left out: no
     * read requires them ({@link ForgottenEvents} counts what they hold).
     */
    public static Map<Key, CommittedLane> of(LogView view) {
        Map<Key, CommittedLane> found = new LinkedHashMap<>();
        for (LogCheckpoint.Lane lane : view.checkpoint().lanes().values()) {
            found.put(new Key(lane.node(), lane.lane()),
                    new CommittedLane(lane.node(), lane.host(), lane.root(), lane.lane(), lane.batches()));
        }
        Map<String, Long> nodes = new HashMap<>();
        for (LogCheckpoint.Node node : view.checkpoint().nodes().values()) {
            nodes.put(node.node(), node.batches());
        }
        for (NavigableMap<Long, Decision> entries : view.entries().values()) {
            for (Decision decision : entries.values()) {
                if (decision.aborted()) {
                    continue;
                }
                Set<Key> lanesOfBatch = new HashSet<>();
                Set<String> nodesOfBatch = new HashSet<>();
                for (ObjectNode tx : decision.txs()) {
                    String node = tx.get(Constants.EntryTx.NODE).textValue();
                    Key key = new Key(node, tx.get(Constants.EntryTx.LANE).textValue());
                    CommittedLane lane = found.computeIfAbsent(key, named -> named(tx, named));
                    if (lanesOfBatch.add(key)) {
                        lane.batches++;
                    }
                    if (nodesOfBatch.add(node)) {
                        nodes.merge(node, 1L, Long::sum);
                    }
                }
            }
        }
        found.values().removeIf(lane -> view.forgotten().containsKey(lane.node));
        for (CommittedLane lane : found.values()) {
            lane.nodeBatches = nodes.getOrDefault(lane.node, 0L);
        }
        return found;
    }

    private static CommittedLane named(ObjectNode tx, Key key) {
        return new CommittedLane(key.node(), Decision.host(tx), Decision.root(tx), key.lane(), 0);
    }

    /** The node id ("uuid@host") of the root that holds the lane. */
    public String node() {
        return node;
    }

    /** The host the writing task ran on. */
    public String host() {
        return host;
    }

    /** The root path as that host resolved it ("" if the log does not say). */
    public String root() {
        return root;
    }

    /** The lane folder's name (lane-NNN). */
    public String lane() {
        return lane;
    }

    public Key key() {
        return new Key(node, lane);
    }

    /** The number of committed batches the lane holds. */
    public long batches() {
        return batches;
    }

    /** The number of committed batches the lane's node holds over all its lanes (a batch once). */
    public long nodeBatches() {
        return nodeBatches;
    }
}
