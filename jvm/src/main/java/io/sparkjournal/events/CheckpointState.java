package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.CodePoints;
import io.sparkjournal.journal.CanonicalJson;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The state a checkpoint writer folds entries into (COMMIT_LOG.md,
 * "Checkpoints"): started from the newest readable {@link LogCheckpoint},
 * added to one committed batch at a time ({@link #fold}), written in the
 * canonical form of JSON.md ({@link #json}), lists in code point order. Not
 * thread-safe; one writer builds one.
 *
 * <p>Where the spec is silent: a lane's committed ranges are kept as the
 * checkpoint listed them (adjacent ranges a reader accepted stay unmerged
 * until a fold touches them); a tx's absent "host" is the part of its node
 * after the last "@", an absent "root" is "", absent "rows" and "bytes" count
 * 0 (the entry's reader has checked their types: {@link Decision}).
 */
final class CheckpointState {

    private static final class LaneCounts {
        final String host;
        final String root;
        long batches;
        long rows;
        final List<long[]> committed = new ArrayList<>();     // [first, last], u64s in longs

        LaneCounts(String host, String root) {
            this.host = host;
            this.root = root;
        }
    }

    private final Map<String, LogCheckpoint.Query> queries = new TreeMap<>(CodePoints::compare);
    private final Map<CommittedLane.Key, LaneCounts> lanes = new TreeMap<>((a, b) -> {
        int order = CodePoints.compare(a.node(), b.node());
        return order != 0 ? order : CodePoints.compare(a.lane(), b.lane());
    });
    private final Map<String, LogCheckpoint.Node> nodes = new TreeMap<>(CodePoints::compare);

    /** The state of {@code base} ({@link LogCheckpoint#NONE}: nothing folded yet). */
    CheckpointState(LogCheckpoint base) {
        queries.putAll(base.queries());
        for (Map.Entry<CommittedLane.Key, LogCheckpoint.Lane> lane : base.lanes().entrySet()) {
            LogCheckpoint.Lane found = lane.getValue();
            LaneCounts counts = new LaneCounts(found.host(), found.root());
            counts.batches = found.batches();
            counts.rows = found.rows();
            long[] bounds = found.committed().bounds();
            for (int i = 0; i < bounds.length; i += 2) {
                counts.committed.add(new long[] {bounds[i], bounds[i + 1]});
            }
            lanes.put(lane.getKey(), counts);
        }
        nodes.putAll(base.nodes());
    }

    /**
     * Adds one batch past its query's {@code through} (callers fold a query's
     * entries in batch order); an abort entry folds nothing: it stays in the
     * view until a commit passes it.
     */
    void fold(Decision decision) {
        if (decision.aborted()) {
            return;
        }
        LogCheckpoint.Query query = queries.getOrDefault(decision.query(),
                new LogCheckpoint.Query(decision.query(), -1, 0, 0, 0));
        if (decision.batch() <= query.through()) {
            throw new IllegalStateException("batch " + decision.batch() + " of " + decision.query()
                    + " is already folded");
        }
        long at = decision.committedAtMs();
        queries.put(query.query(), new LogCheckpoint.Query(query.query(), decision.batch(), query.decided() + 1,
                query.rows() + decision.rows().longValue(), Math.max(query.lastCommittedAtMs(), at)));
        Set<CommittedLane.Key> lanesCounted = new HashSet<>();     // a batch counts once per lane, node
        Set<String> nodesCounted = new HashSet<>();
        for (ObjectNode tx : decision.txs()) {
            String node = tx.get(Constants.EntryTx.NODE).textValue();
            CommittedLane.Key key = new CommittedLane.Key(node, tx.get(Constants.EntryTx.LANE).textValue());
            LaneCounts lane = lanes.computeIfAbsent(key, missing -> new LaneCounts(
                    Decision.host(tx), Decision.root(tx)));
            long rows = Decision.count(tx, Constants.EntryTx.ROWS);
            if (lanesCounted.add(key)) {
                lane.batches++;
            }
            lane.rows += rows;
            addTx(lane.committed, tx.get(Constants.EntryTx.TX).bigIntegerValue().longValue());
            LogCheckpoint.Node counts = nodes.getOrDefault(node, new LogCheckpoint.Node(node, 0, 0, 0, 0));
            nodes.put(node, new LogCheckpoint.Node(node, counts.batches() + (nodesCounted.add(node) ? 1 : 0),
                    counts.rows() + rows, counts.bytes() + Decision.count(tx, Constants.EntryTx.BYTES),
                    Math.max(counts.lastCommittedAtMs(), at)));
        }
    }

    /** Adds {@code tx} (a u64) to sorted disjoint ranges, merging it with a range it touches
     *  and closing a hole it fills (COMMIT_LOG.md, "Checkpoints": adjacent ranges merged). */
    static void addTx(List<long[]> ranges, long tx) {
        int at = bisectLeft(ranges, tx);
        if (at > 0 && (tx == 0 || Long.compareUnsigned(ranges.get(at - 1)[1], tx - 1) >= 0)) {
            if (Long.compareUnsigned(ranges.get(at - 1)[1], tx) < 0) {
                ranges.get(at - 1)[1] = tx;
            }
            at--;
        } else if (at < ranges.size() && (tx == -1 || Long.compareUnsigned(ranges.get(at)[0], tx + 1) <= 0)) {
            if (Long.compareUnsigned(tx, ranges.get(at)[0]) < 0) {
                ranges.get(at)[0] = tx;
            }
        } else {
            ranges.add(at, new long[] {tx, tx});
        }
        if (at + 1 < ranges.size() && (ranges.get(at)[1] == -1
                || Long.compareUnsigned(ranges.get(at + 1)[0], ranges.get(at)[1] + 1) <= 0)) {   // closed a hole
            long last = ranges.remove(at + 1)[1];
            if (Long.compareUnsigned(last, ranges.get(at)[1]) > 0) {
                ranges.get(at)[1] = last;
            }
        }
    }

    /** bisect_left(ranges, [tx, tx]): the first range not below [tx, tx] (lists compared item by item). */
    private static int bisectLeft(List<long[]> ranges, long tx) {
        int low = 0;
        int high = ranges.size();
        while (low < high) {
            int middle = (low + high) >>> 1;
            long[] range = ranges.get(middle);
            int order = Long.compareUnsigned(range[0], tx);
            if (order < 0 || order == 0 && Long.compareUnsigned(range[1], tx) < 0) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        return low;
    }

    /** The checkpoint file's bytes: this state in the canonical form of JSON.md. */
    byte[] json(long seq, long writtenAtMs) {
        List<Object> queryList = new ArrayList<>();
        queries.forEach((name, query) -> queryList.add(object(Constants.CheckpointQuery.QUERY, name,
                Constants.CheckpointQuery.THROUGH, query.through(), Constants.CheckpointQuery.DECIDED, query.decided(), Constants.CheckpointQuery.ROWS, query.rows(),
                Constants.CheckpointQuery.LAST_COMMITTED_AT_MS, query.lastCommittedAtMs())));
        List<Object> laneList = new ArrayList<>();
        lanes.forEach((key, lane) -> {
            List<Object> committed = new ArrayList<>();
            for (long[] range : lane.committed) {
                committed.add(List.of(unsigned(range[0]), unsigned(range[1])));
            }
            laneList.add(object(Constants.CheckpointLane.NODE, key.node(), Constants.CheckpointLane.HOST, lane.host, Constants.CheckpointLane.ROOT, lane.root,
                    Constants.CheckpointLane.LANE, key.lane(), Constants.CheckpointLane.BATCHES, lane.batches, Constants.CheckpointLane.ROWS, lane.rows,
                    Constants.CheckpointLane.COMMITTED, committed));
        });
        List<Object> nodeList = new ArrayList<>();
        nodes.forEach((name, node) -> nodeList.add(object(Constants.CheckpointNode.NODE, name, Constants.CheckpointNode.BATCHES, node.batches(),
                Constants.CheckpointNode.ROWS, node.rows(), Constants.CheckpointNode.BYTES, node.bytes(),
                Constants.CheckpointNode.LAST_COMMITTED_AT_MS, node.lastCommittedAtMs())));
        Map<String, Object> data = object(Constants.Checkpoint.FORMAT, (long) LogCheckpoint.FORMAT, Constants.Checkpoint.SEQ, seq,
                Constants.Checkpoint.WRITTEN_AT_MS, writtenAtMs, Constants.Checkpoint.QUERIES, queryList, Constants.Checkpoint.LANES, laneList,
                Constants.Checkpoint.NODES, nodeList);
        return CanonicalJson.bytes(data);
    }

    private static Map<String, Object> object(Object... pairs) {
        Map<String, Object> made = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            made.put((String) pairs[i], pairs[i + 1]);
        }
        return made;
    }

    private static Object unsigned(long value) {
        return value >= 0 ? (Object) value : new BigInteger(Long.toUnsignedString(value));
    }
}
