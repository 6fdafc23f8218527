package io.sparkjournal.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Logger;

import org.apache.spark.SparkContext;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.connector.read.streaming.ReadLimit;
import org.apache.spark.sql.connector.read.streaming.ReadMaxBytes;
import org.apache.spark.sql.connector.read.streaming.ReadMaxRows;
import org.apache.spark.sql.connector.read.streaming.ReportsSourceMetrics;
import org.apache.spark.sql.connector.read.streaming.SupportsTriggerAvailableNow;

/**
 * {@code spark.readStream.format("sparkjournal")} in the JVM, with the same
 * offsets as the Python stream reader ({@link LaneOffsets}, one next record
 * id per lane), the same rule and the same limits.
 *
 * <p>A micro-batch reads, in every lane, the visible events whose record ids
 * lie in [start, end). A lane's end never passes its stable point
 * ({@link io.sparkjournal.events.StablePoint}): below it every transaction is
 * final, so the same range read again - a restart re-runs the last batch
 * with the offsets Spark logged for it - yields the same rows, and no later
 * commit lands below a position already passed. Nothing is replayed twice or
 * skipped across restarts; {@code commit} has nothing to release (the
 * journal keeps records until maintenance).
 *
 * <p>Lanes are planned each trigger as a batch scan plans them
 * ({@link LanePlanner}: the commit log's lanes and those the driver sees),
 * and each lane's stable point is found where the lane is
 * ({@link LaneProbes}): so the stream runs with the driver off every host.
 * Each micro-batch's partitions prefer their lane's host, and a task
 * elsewhere fails its NODE_ID check rather than read another node's lane.
 *
 * <p>{@code maxRowsPerTrigger} / {@code maxBytesPerTrigger} take whole
 * records, at least one ({@link TriggerLimit}); {@code Trigger.AvailableNow}
 * fixes each lane's end at its stable point when the query starts and
 * reaches it in batches of that limit.
 *
 * <p>Each trigger's progress carries the stream's metrics
 * ({@link StreamMetrics}: forgottenEvents, oldestUndecidedAgeMs,
 * heldBackRows) in {@code sources[].metrics}, as the trigger's planning and
 * lane probes found them.
 */
final class JournalStream implements MicroBatchStream, SupportsTriggerAvailableNow, ReportsSourceMetrics {

    private static final Logger LOG = Logger.getLogger("sparkjournal.stream");
    private static final String DOING = "spark.readStream.format('sparkjournal')";

    private final ReadOptions options;
    private final JournalSchema journal;
    private final PartitionReaderFactory readers;      // the scan's: its columns and starting point
    private Map<String, Long> cap;                     // availableNow: each lane's end, fixed at its start
    private Map<String, LanePartition> planned;        // the last trigger's lanes, by key
    private volatile StreamMetrics metrics = StreamMetrics.NONE;   // the last trigger's
    private long lastHangWarnMs;                                   // 0: never warned

    JournalStream(ReadOptions options, JournalSchema journal, PartitionReaderFactory readers) {
        this.options = options;
        this.journal = journal;
        this.readers = readers;
    }

    @Override
    public Offset initialOffset() {
        return LaneOffsets.EMPTY;
    }

    @Override
    public Offset deserializeOffset(String json) {
        return LaneOffsets.parse(json);
    }

    @Override
    public ReadLimit getDefaultReadLimit() {
        if (options.maxRows() != null) {
            return ReadLimit.maxRows(options.maxRows());
        }
        if (options.maxBytes() != null) {
            return ReadLimit.maxBytes(options.maxBytes());
        }
        return ReadLimit.allAvailable();
    }

    @Override
    public void prepareForTriggerAvailableNow() {
        Map<String, Long> ends = new LinkedHashMap<>();
        progress(LaneOffsets.EMPTY, false).forEach((key, found) -> ends.put(key, found.stable()));
        cap = ends;
        LOG.info("availableNow: " + DOING + " of " + options.path() + " reads up to " + new LaneOffsets(ends).json());
    }

    @Override
    public Offset latestOffset() {
        throw new UnsupportedOperationException("latestOffset(Offset, ReadLimit) is the one Spark calls");
    }

    @Override
    public synchronized Offset latestOffset(Offset start, ReadLimit limit) {
        LaneOffsets begin = start instanceof LaneOffsets ours ? ours : LaneOffsets.parse(start.json());
        boolean limited = limit instanceof ReadMaxRows || limit instanceof ReadMaxBytes;
        Map<String, LaneProgress> found = progress(begin, limited);
        Map<String, Long> ends = new LinkedHashMap<>();
        if (cap != null) {
            cap.forEach((key, at) -> ends.put(key, Math.max(begin.next(key), at)));
        } else {
            found.forEach((key, lane) -> ends.put(key, Math.max(begin.next(key), lane.stable())));
        }
        begin.lanes().forEach(ends::putIfAbsent);
        if (!limited) {
            return new LaneOffsets(ends);
        }
        Map<String, long[][]> pending = new LinkedHashMap<>();
        found.forEach((key, lane) -> pending.put(key, lane.sizes()));
        return limit instanceof ReadMaxRows rows
                ? new LaneOffsets(TriggerLimit.apply(begin, ends, pending, rows.maxRows(), true))
                : new LaneOffsets(TriggerLimit.apply(begin, ends, pending, ((ReadMaxBytes) limit).maxBytes(), false));
    }

    /** Every lane planned now, probed where it is; under availableNow only the lanes its start saw. */
    private Map<String, LaneProgress> progress(LaneOffsets begin, boolean sizes) {
        SparkContext sc = SparkSession.active().sparkContext();
        Map<String, LanePartition> lanes = new LinkedHashMap<>();
        LanePlanner.Planned plan = LanePlanner.plan(sc, options, journal, DOING);
        for (LanePartition lane : plan.lanes()) {
            lanes.put(lane.key(), lane);
        }
        planned = lanes;
        List<LaneProbe> probes = new ArrayList<>();
        for (LanePartition lane : lanes.values()) {
            if (cap != null && !cap.containsKey(lane.key())) {
                continue;
            }
            probes.add(new LaneProbe(lane, begin.next(lane.key()), cap == null ? null : cap.get(lane.key()), sizes,
                    journal.logBase(), options.skipCorrupt(), options.checksum(),
                    new ArrayList<>(List.of(journal.events().fieldNames()))));
        }
        Map<String, LaneProgress> found = LaneProbes.run(sc, probes);
        Map<String, LaneProgress> ordered = new LinkedHashMap<>();
        for (LaneProbe probe : probes) {
            ordered.put(probe.lane().key(), found.get(probe.lane().key()));
        }
        metrics = StreamMetrics.of(plan.forgotten(), ordered.values());
        warnIfHanging(metrics.oldestUndecidedAgeMs());
        return ordered;
    }

    /** A WARNING, at most once per undecidedWarnAfter, while an undecided batch older than
     *  that holds this stream's lanes, naming the commands that show and end it. */
    private void warnIfHanging(long oldestAgeMs) {
        long after = options.undecidedWarnAfterMs();
        long now = System.currentTimeMillis();
        if (after <= 0 || oldestAgeMs < after || now - lastHangWarnMs < after) {
            return;
        }
        lastHangWarnMs = now;
        LOG.warning("an undecided batch has held lanes of " + options.path() + " for "
                + oldestAgeMs / 1000 + " s: it holds back this stream (heldBackRows). If its query is "
                + "not coming back, see `sparkjournal transactions " + options.path() + "` and end it "
                + "with `sparkjournal abort " + options.path() + " --query Q --batch N`");
    }

    /** The last trigger's metrics, as its progress shows them ({@link StreamMetrics}). */
    @Override
    public Map<String, String> metrics(Optional<Offset> latestConsumedOffset) {
        return metrics.asMap();
    }

    /** The committed events of forgotten nodes the last trigger left out (the scan's driver metric). */
    long forgottenEvents() {
        return metrics.forgottenEvents();
    }

    @Override
    public synchronized InputPartition[] planInputPartitions(Offset start, Offset end) {
        LaneOffsets begin = start == null ? LaneOffsets.EMPTY
                : start instanceof LaneOffsets ours ? ours : LaneOffsets.parse(start.json());
        LaneOffsets stop = end instanceof LaneOffsets ours ? ours : LaneOffsets.parse(end.json());
        Map<String, LanePartition> lanes = planned;
        if (lanes == null || !lanes.keySet().containsAll(stop.lanes().keySet())) {
            lanes = new LinkedHashMap<>();              // a restart re-running its last batch: plan again
            for (LanePartition lane : LanePlanner.plan(SparkSession.active().sparkContext(), options, journal,
                    DOING).lanes()) {
                lanes.put(lane.key(), lane);
            }
        }
        List<InputPartition> partitions = new ArrayList<>();
        for (Map.Entry<String, Long> lane : stop.lanes().entrySet()) {
            long first = begin.next(lane.getKey());
            if (lane.getValue() <= first) {
                continue;
            }
            LanePartition where = lanes.get(lane.getKey());
            if (where == null) {
                throw new IllegalStateException("lane " + lane.getKey() + " named by this stream's offsets is not visible "
                        + "under " + options.path() + " any more: its records " + first + ".." + (lane.getValue() - 1)
                        + " cannot be read. Restore the lane, or start the stream from a new checkpoint");
            }
            partitions.add(where.range(first, lane.getValue()));
        }
        return partitions.toArray(new InputPartition[0]);
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return readers;
    }

    @Override
    public void commit(Offset end) {
        // nothing to release: the journal keeps records until maintenance
    }

    @Override
    public void stop() {
        // nothing held between triggers
    }

    @Override
    public String toString() {
        return "sparkjournal stream " + options.path();
    }
}
