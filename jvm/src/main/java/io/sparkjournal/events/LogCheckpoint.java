package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.format.Constants;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.CodePoints;
import io.sparkjournal.journal.Shown;
import io.sparkjournal.journal.StrictJson;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One checkpoint of a commit log ({@code _checkpoints/<seq>.json},
 * COMMIT_LOG.md "Checkpoints"): every entry up to its {@code through} per
 * query, folded into per-query, per-lane and per-node state. Immutable.
 *
 * <p>{@link #parse} reads a checkpoint strictly (JSON.md) and accepts it only
 * whole (COMMIT_LOG.md, "Reader requirement"): "format" first (an integer
 * above 1 is a {@link FormatVersionException}, refused before anything else
 * is read; any other value but 1 is damage), "seq" equal to the number its
 * file is named for, every field the spec lists present with its type
 * (integers of 0 .. 2^63 - 1, the range this reader holds; a lane's "host"
 * and "root" included), query names that can name a folder, committed ranges
 * sorted and disjoint ({@link TxRanges}), and queries, lanes and nodes sorted
 * strictly (code point order, so no repeats). A node's "bytes" and
 * "last_committed_at_ms" are optional (absent: 0). Unknown names are ignored.
 * Anything else is a {@link CommitLogException} naming the file: damage, which
 * the reader reports and falls back from ({@link Checkpoints}).
 */
public final class LogCheckpoint {

    /** The checkpoint format this code reads. */
    public static final int FORMAT = 1;

    /** A query's folded state: its highest folded batch, and counts of its decided batches and rows. */
    public record Query(String query, long through, long decided, long rows, long lastCommittedAtMs) {
    }

    /** A lane any folded entry named: where it is, its decided batches and rows, its committed txs. */
    public record Lane(String node, String host, String root, String lane, long batches, long rows,
                       TxRanges committed) {
    }

    /** A node's decided batches (a batch once however many of its lanes it wrote) and rows; its
     *  transactions' bytes and its newest decision's time, 0 where the checkpoint does not say. */
    public record Node(String node, long batches, long rows, long bytes, long lastCommittedAtMs) {
    }

    /** The state before any checkpoint: nothing folded (seq -1). */
    public static final LogCheckpoint NONE = new LogCheckpoint(-1, 0, List.of(), List.of(), List.of());

    private final long seq;
    private final long writtenAtMs;
    private final Map<String, Query> queries = new LinkedHashMap<>();
    private final Map<CommittedLane.Key, Lane> lanes = new LinkedHashMap<>();
    private final Map<String, Node> nodes = new LinkedHashMap<>();

    private LogCheckpoint(long seq, long writtenAtMs, List<Query> queries, List<Lane> lanes,
                          List<Node> nodes) {
        this.seq = seq;
        this.writtenAtMs = writtenAtMs;
        for (Query query : queries) {
            this.queries.put(query.query(), query);
        }
        for (Lane lane : lanes) {
            this.lanes.put(new CommittedLane.Key(lane.node(), lane.lane()), lane);
        }
        for (Node node : nodes) {
            this.nodes.put(node.node(), node);
        }
    }

    /** The checkpoint {@code raw} holds; {@code where} names its file, {@code seq} the number in its name. */
    public static LogCheckpoint parse(byte[] raw, String where, long seq)
            throws CommitLogException, FormatVersionException {
        try {
            JsonNode data = StrictJson.parse(raw);
            StrictJson.format(data, FORMAT, "commit log checkpoint", where);
            long found = StrictJson.whole(data, Constants.Checkpoint.SEQ);
            if (found != seq) {
                throw new IllegalArgumentException("its seq is " + found + " but its file is named for seq " + seq);
            }
            return new LogCheckpoint(seq, StrictJson.whole(data, Constants.Checkpoint.WRITTEN_AT_MS),
                    queries(list(data, Constants.Checkpoint.QUERIES)), lanes(list(data, Constants.Checkpoint.LANES)),
                    nodes(list(data, Constants.Checkpoint.NODES)));
        } catch (IllegalArgumentException wrong) {
            throw new CommitLogException("commit log checkpoint " + where + " is damaged ("
                    + wrong.getMessage() + "); restore it from a backup", wrong);
        }
    }

    private static List<Query> queries(List<JsonNode> items) {
        List<Query> found = new ArrayList<>();
        for (JsonNode item : items) {
            String name = StrictJson.string(item, Constants.CheckpointQuery.QUERY);
            try {
                CommitLog.safeName(name);
            } catch (EventsException unusable) {
                throw new IllegalArgumentException(unusable.getMessage());
            }
            if (!found.isEmpty() && CodePoints.compare(found.get(found.size() - 1).query(), name) >= 0) {
                throw new IllegalArgumentException("its queries are not sorted by name, or repeat one, at "
                        + Shown.text(name));
            }
            found.add(new Query(name, StrictJson.whole(item, Constants.CheckpointQuery.THROUGH), StrictJson.whole(item, Constants.CheckpointQuery.DECIDED),
                    StrictJson.whole(item, Constants.CheckpointQuery.ROWS), StrictJson.whole(item, Constants.CheckpointQuery.LAST_COMMITTED_AT_MS)));
        }
        return found;
    }

    private static List<Lane> lanes(List<JsonNode> items) {
        List<Lane> found = new ArrayList<>();
        for (JsonNode item : items) {
            String node = StrictJson.string(item, Constants.CheckpointLane.NODE);
            String lane = StrictJson.string(item, Constants.CheckpointLane.LANE);
            if (!found.isEmpty()) {
                Lane before = found.get(found.size() - 1);
                int order = CodePoints.compare(before.node(), node);
                if (order > 0 || order == 0 && CodePoints.compare(before.lane(), lane) >= 0) {
                    throw new IllegalArgumentException("its lanes are not sorted by (node, lane), or repeat one, at "
                            + Shown.text(node) + " " + Shown.text(lane));
                }
            }
            found.add(new Lane(node, StrictJson.string(item, Constants.CheckpointLane.HOST), StrictJson.string(item, Constants.CheckpointLane.ROOT), lane,
                    StrictJson.whole(item, Constants.CheckpointLane.BATCHES), StrictJson.whole(item, Constants.CheckpointLane.ROWS),
                    TxRanges.parse(StrictJson.array(item, Constants.CheckpointLane.COMMITTED))));
        }
        return found;
    }

    private static List<Node> nodes(List<JsonNode> items) {
        List<Node> found = new ArrayList<>();
        for (JsonNode item : items) {
            String node = StrictJson.string(item, Constants.CheckpointNode.NODE);
            if (!found.isEmpty() && CodePoints.compare(found.get(found.size() - 1).node(), node) >= 0) {
                throw new IllegalArgumentException("its nodes are not sorted, or repeat one, at " + Shown.text(node));
            }
            found.add(new Node(node, StrictJson.whole(item, Constants.CheckpointNode.BATCHES), StrictJson.whole(item, Constants.CheckpointNode.ROWS),
                    StrictJson.whole(item, Constants.CheckpointNode.BYTES, 0), StrictJson.whole(item, Constants.CheckpointNode.LAST_COMMITTED_AT_MS, 0)));
        }
        return found;
    }

    private static List<JsonNode> list(JsonNode data, String key) {
        List<JsonNode> items = new ArrayList<>();
        for (JsonNode item : StrictJson.array(data, key)) {
            items.add(StrictJson.requireObject(item, "an item of \"" + key + "\""));
        }
        return items;
    }

    /** The checkpoint's seq; -1 for {@link #NONE}. */
    public long seq() {
        return seq;
    }

    public long writtenAtMs() {
        return writtenAtMs;
    }

    /** The folded state of {@code query}, or null if the checkpoint does not know it. */
    public Query query(String query) {
        return queries.get(query);
    }

    /** Every query it knows, by name (code point order). */
    public Map<String, Query> queries() {
        return Collections.unmodifiableMap(queries);
    }

    /** Every lane it knows, by (node, lane) in that order. */
    public Map<CommittedLane.Key, Lane> lanes() {
        return Collections.unmodifiableMap(lanes);
    }

    /** Every node it knows, by node id in order. */
    public Map<String, Node> nodes() {
        return Collections.unmodifiableMap(nodes);
    }

    /** Whether {@code ref} lies in the committed ranges of its (node, lane). */
    public boolean committed(TxRef ref) {
        Lane lane = lanes.get(new CommittedLane.Key(ref.node(), ref.lane()));
        return lane != null && lane.committed().contains(ref.tx());
    }

    @Override
    public String toString() {
        return seq < 0 ? "no checkpoint" : "checkpoint " + seq;
    }
}
