package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * A lane that holds committed data, known from the commit log alone
 * (events/committed_lanes.py): every decision names its transactions by node
 * id, host, root and lane, so the union over all decisions of all queries is
 * the set of lanes a complete read must reach, each with the batches it holds.
 *
 * <p>Conservative: a lane whose committed events were all deleted since is
 * still named (the log is never rewritten); a batch with a decision is always
 * counted. A batch listed and then gone before its read is skipped. Errors of
 * the log ({@link CommitLogException}, {@link io.sparkjournal.format.FormatVersionException})
 * are thrown: a read cannot know its lanes without every decision.
 */
public final class CommittedLane {

    /** A lane's identity: the node id of its root and the lane folder's name. */
    public record Key(String node, String lane) {
    }

    /** One committed batch: its query and batch id. */
    public record QueryBatch(String query, long batch) {
    }

    private final String node;
    private final String host;
    private final String root;
    private final String lane;
    private final Set<QueryBatch> batches = new LinkedHashSet<>();

    private CommittedLane(String node, String host, String root, String lane) {
        this.node = node;
        this.host = host;
        this.root = root;
        this.lane = lane;
    }

    /**
     * Every lane a decision in {@code log} names, by key, in the order first
     * named (queries in name order, batches ascending, txs as listed); host and
     * root are those of the first tx entry naming the lane: "host" if truthy,
     * else the part of the node id after its last '@'; "root" if truthy, else "".
     */
    public static Map<Key, CommittedLane> of(CommitLog log) throws IOException {
        Map<Key, CommittedLane> found = new LinkedHashMap<>();
        for (String query : log.queries()) {
            for (long batch : log.batches(query)) {
                Decision decision = log.decision(query, batch);
                if (decision == null) {
                    continue;
                }
                for (ObjectNode tx : decision.txs()) {
                    String node = tx.get("node").textValue();
                    Key key = new Key(node, tx.get("lane").textValue());
                    CommittedLane lane = found.get(key);
                    if (lane == null) {
                        JsonNode host = tx.get("host");
                        JsonNode root = tx.get("root");
                        lane = new CommittedLane(node,
                                PyJson.truthy(host) ? PyRepr.strOf(host)
                                        : node.substring(node.lastIndexOf('@') + 1),
                                PyJson.truthy(root) ? PyRepr.strOf(root) : "", key.lane());
                        found.put(key, lane);
                    }
                    lane.batches.add(new QueryBatch(query, batch));
                }
            }
        }
        return found;
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

    /** The committed batches the lane holds. */
    public Set<QueryBatch> batches() {
        return Collections.unmodifiableSet(batches);
    }
}
