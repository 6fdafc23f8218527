package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.PythonRepr;
import java.io.IOException;
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
 * <p>{@link #parse} accepts a checkpoint only whole: "format" 1 (a whole
 * number above 1 is a {@link FormatVersionException}, refused before anything
 * else is read), "seq" equal to the number in its file name, every documented
 * field present with its type (whole numbers fitting 64 bits, counts not
 * negative), query names that can name a folder, committed ranges sorted and
 * disjoint ({@link TxRanges}), and queries, lanes and nodes sorted strictly
 * (code point order, so no duplicates). Lane "host" and "root" default as the
 * spec says when absent; a node's optional "bytes" and
 * "last_committed_at_ms" are 0 when absent, whole numbers when present. Unknown keys are ignored. Anything else is a
 * {@link CommitLogException} naming the file: damage, which the reader
 * reports and passes over ({@link Checkpoints}).
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
            JsonNode data;
            try {
                data = PyJson.parse(raw);
            } catch (IOException notJson) {
                throw new IllegalArgumentException("not JSON: " + String.valueOf(notJson.getMessage())
                        .lines().findFirst().orElse(""));
            }
            if (!data.isObject()) {
                throw new IllegalArgumentException("not a JSON object");
            }
            JsonNode format = data.get("format");
            NewerFormat.refuse(format, "commit log checkpoint", where, FORMAT);
            if (!PyJson.equalsOne(format)) {
                throw new IllegalArgumentException("format " + PyRepr.reprOf(format) + ", expected " + FORMAT);
            }
            long found = whole(data, "seq", 0);
            if (found != seq) {
                throw new IllegalArgumentException("seq " + found + " but the file is named for seq " + seq);
            }
            return new LogCheckpoint(seq, whole(data, "written_at_ms", Long.MIN_VALUE),
                    queries(list(data, "queries")), lanes(list(data, "lanes")), nodes(list(data, "nodes")));
        } catch (IllegalArgumentException wrong) {
            throw new CommitLogException("commit log checkpoint " + where + " is damaged ("
                    + wrong.getMessage() + "); restore it from a backup", wrong);
        }
    }

    private static List<Query> queries(List<JsonNode> items) {
        List<Query> found = new ArrayList<>();
        for (JsonNode item : items) {
            String name = text(item, "query");
            try {
                CommitLog.safeName(name);
            } catch (EventsException unusable) {
                throw new IllegalArgumentException(unusable.getMessage());
            }
            if (!found.isEmpty() && PythonRepr.compareCodePoints(found.get(found.size() - 1).query(), name) >= 0) {
                throw new IllegalArgumentException("queries are not sorted by name: " + PyRepr.str(name));
            }
            found.add(new Query(name, whole(item, "through", 0), whole(item, "decided", 0),
                    whole(item, "rows", 0), whole(item, "last_committed_at_ms", Long.MIN_VALUE)));
        }
        return found;
    }

    private static List<Lane> lanes(List<JsonNode> items) {
        List<Lane> found = new ArrayList<>();
        for (JsonNode item : items) {
            String node = text(item, "node");
            String lane = text(item, "lane");
            if (!found.isEmpty()) {
                Lane before = found.get(found.size() - 1);
                int order = PythonRepr.compareCodePoints(before.node(), node);
                if (order > 0 || order == 0 && PythonRepr.compareCodePoints(before.lane(), lane) >= 0) {
                    throw new IllegalArgumentException("lanes are not sorted by (node, lane): "
                            + PyRepr.str(node) + " " + PyRepr.str(lane));
                }
            }
            String host = item.has("host") ? text(item, "host") : node.substring(node.lastIndexOf('@') + 1);
            String root = item.has("root") ? text(item, "root") : "";
            found.add(new Lane(node, host, root, lane, whole(item, "batches", 0), whole(item, "rows", 0),
                    TxRanges.parse(item.get("committed"))));
        }
        return found;
    }

    private static List<Node> nodes(List<JsonNode> items) {
        List<Node> found = new ArrayList<>();
        for (JsonNode item : items) {
            String node = text(item, "node");
            if (!found.isEmpty() && PythonRepr.compareCodePoints(found.get(found.size() - 1).node(), node) >= 0) {
                throw new IllegalArgumentException("nodes are not sorted: " + PyRepr.str(node));
            }
            found.add(new Node(node, whole(item, "batches", 0), whole(item, "rows", 0),
                    item.has("bytes") ? whole(item, "bytes", 0) : 0,
                    item.has("last_committed_at_ms") ? whole(item, "last_committed_at_ms", Long.MIN_VALUE) : 0));
        }
        return found;
    }

    private static List<JsonNode> list(JsonNode data, String key) {
        JsonNode value = data.get(key);
        if (value == null || !value.isArray()) {
            throw new IllegalArgumentException(key + " must be a list");
        }
        List<JsonNode> items = new ArrayList<>();
        for (JsonNode item : value) {
            if (!item.isObject()) {
                throw new IllegalArgumentException(key + " must be a list of objects, holds " + shown(item));
            }
            items.add(item);
        }
        return items;
    }

    private static String text(JsonNode item, String key) {
        JsonNode value = item.get(key);
        if (value == null || !value.isTextual()) {
            throw new IllegalArgumentException("'" + key + "' must be a string in " + shown(item));
        }
        return value.textValue();
    }

    private static long whole(JsonNode item, String key, long least) {
        JsonNode value = item.get(key);
        if (!PyJson.isInt(value) || value.bigIntegerValue().bitLength() > 63 || value.longValue() < least) {
            throw new IllegalArgumentException("'" + key + "' must be a whole number"
                    + (least == 0 ? " of 0 or more" : "") + " fitting 64 bits in " + shown(item));
        }
        return value.longValue();
    }

    /** {@code value} as JSON, cut to 200 characters: a message names the place, not the whole file. */
    private static String shown(JsonNode value) {
        String text = value.toString();
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
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
