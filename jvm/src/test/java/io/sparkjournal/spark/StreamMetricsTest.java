package io.sparkjournal.spark;

import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;

import io.sparkjournal.TempFolder;
import io.sparkjournal.events.EventsBodyWriter;
import io.sparkjournal.events.ForgottenEvents;
import io.sparkjournal.events.TaskWrite;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The metrics a read reports: the stream's progress metrics
 * ({@link StreamMetrics}, from its lanes' probes) and the scan's
 * {@link ForgottenEventsMetric}; and a lane probe's findings on a real lane
 * where an undecided transaction holds back a committed one.
 */
public final class StreamMetricsTest {

    private StreamMetricsTest() {
    }

    public static void testATriggersMetricsSumHeldBackRowsAndTakeTheOldestAge() {
        StreamMetrics found = StreamMetrics.of(new ForgottenEvents(List.of("a@x"), 2, 20), List.of(
                new LaneProgress("a@x|lane-000", 5, new long[0][], 3, 1200),
                new LaneProgress("b@y|lane-000", 9, new long[0][], 4, 0),
                new LaneProgress("b@y|lane-001", 9, new long[0][], 0, 700)));
        equal(new StreamMetrics(20, 1200, 7), found, "forgotten events, the oldest age, the rows summed");
        equal(List.of("forgottenEvents", "oldestUndecidedAgeMs", "heldBackRows"), List.copyOf(found.asMap().keySet()),
                "the progress's names");
        equal(List.of("20", "1200", "7"), List.copyOf(found.asMap().values()), "as text");
        equal(List.of("0", "0", "0"), List.copyOf(StreamMetrics.NONE.asMap().values()), "before any trigger");
        equal(StreamMetrics.NONE, StreamMetrics.of(ForgottenEvents.NONE, List.of()), "no lane");
    }

    public static void testTheScansForgottenEventsMetricIsASum() {
        ForgottenEventsMetric metric = new ForgottenEventsMetric();
        equal("forgottenEvents", metric.name(), "name");
        equal("20", metric.aggregateTaskMetrics(new long[] {20}), "the driver's value");
        equal(20L, ForgottenEventsMetric.of(20).value(), "the plan's count");
        equal("forgottenEvents", ForgottenEventsMetric.of(20).name(), "the task metric's name");
    }

    public static void testAProbeReportsWhatAnUndecidedTransactionHoldsBack() throws Exception {
        try (TempFolder folder = new TempFolder(); BufferAllocator allocator = new RootAllocator()) {
            Path root = folder.path().resolve("root");
            Path log = folder.path().resolve("_commits");
            Map<String, Object> undecided = write(allocator, root, log, "a", 3);    // never decided
            Map<String, Object> committed = write(allocator, root, log, "b", 5);
            commit(log, "b", committed);
            equal(undecided.get("lane"), committed.get("lane"), "one lane: the task's kept writer");
            String node = (String) committed.get("node");
            LanePartition lane = new LanePartition(root.resolve((String) committed.get("lane")).toString(), node,
                    new String[0]);
            LaneProbe probe = new LaneProbe(lane, 0, null, false, log.toString(), false, true, List.of());
            Thread.sleep(30);
            LaneProgress held = probe.run();
            equal(5L, held.heldBackRows(), "b's committed rows wait behind a's PREPARE");
            isTrue(held.oldestUndecidedAgeMs() >= 30 && held.oldestUndecidedAgeMs() < 600_000,
                    "a's age from its XID's PREPARE time: " + held.oldestUndecidedAgeMs());

            commit(log, "a", undecided);
            LaneProgress free = probe.run();
            equal(0L, free.heldBackRows(), "nothing held once decided");
            equal(0L, free.oldestUndecidedAgeMs(), "no undecided transaction");
            isTrue(free.stable() > held.stable(), "the stable point moved past both");
        }
    }

    /** One JVM task's write of batch 0 of {@code query}: {@code rows} rows, prepared, not decided. */
    private static Map<String, Object> write(BufferAllocator allocator, Path root, Path log, String query, int rows)
            throws Exception {
        byte[] body;
        try (BigIntVector ids = new BigIntVector("id", allocator)) {
            ids.allocateNew(rows);
            for (int i = 0; i < rows; i++) {
                ids.set(i, i);
            }
            ids.setValueCount(rows);
            try (VectorSchemaRoot events = VectorSchemaRoot.of(ids)) {
                body = EventsBodyWriter.body(events, query, 0);
            }
        }
        Iterator<TaskWrite.Body> bodies = List.of(new TaskWrite.Body(ByteBuffer.wrap(body), rows, body.length))
                .iterator();
        return TaskWrite.run(new TaskWrite.Plan(root.toString(), Map.of(), log.toString(), null, query, 0),
                new TaskWrite.Identity(0, 0, 1), bodies, "1");
    }

    /** Writes the commit entry of batch 0 of {@code query} naming the task's transaction. */
    private static void commit(Path log, String query, Map<String, Object> message) throws Exception {
        Map<String, Object> tx = Map.of("node", message.get("node"), "host", message.get("host"),
                "root", message.get("root"), "lane", message.get("lane"), "tx", message.get("tx"),
                "rows", message.get("rows"));
        Path entry = log.resolve(query).resolve(String.format("%020d.json", 0));
        Files.createDirectories(entry.getParent());
        Files.writeString(entry, new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(Map.of("format", 1, "query", query, "batch", 0,
                "committed_at_ms", System.currentTimeMillis(), "txs", List.of(tx))));
    }
}
