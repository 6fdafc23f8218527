package io.sparkjournal.spark;

import java.util.List;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.types.StructType;

/**
 * A batch scan: one partition per lane holding events, planned on the driver
 * from the commit log and what the driver sees ({@link LanePlanner}), each
 * preferring the executors of the host that holds its lane. Planned once per
 * scan: the lanes and their places are fixed when Spark asks for the
 * partitions, and each task reads its lane's snapshot as of when it starts.
 * Metrics: string values shared ({@link SharedStringsMetric}, per task), page
 * file bytes read whole for their CRC ({@link PageBytesCheckedMetric}, per task) and
 * the committed events of forgotten nodes left out ({@link ForgottenEventsMetric},
 * the driver's).
 */
final class JournalScan implements Scan, Batch {

    private final ReadOptions options;
    private final JournalSchema journal;
    private final StructType columns;
    private final List<RecordFilter> filters;
    private InputPartition[] planned;        // once per scan: Spark asks more than once
    private long forgottenEvents;            // the plan's ForgottenEvents
    private volatile JournalStream stream;   // the stream made of this scan, if any

    JournalScan(ReadOptions options, JournalSchema journal, StructType columns, List<RecordFilter> filters) {
        this.options = options;
        this.journal = journal;
        this.columns = columns;
        this.filters = filters;
    }

    /** The same columns and starting point, read as a micro-batch stream ({@link JournalStream}). */
    @Override
    public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
        ConnectorBuild.requireOnExecutors(SparkSession.active().sparkContext(),
                "spark.readStream.format('sparkjournal')");
        stream = new JournalStream(options, journal, createReaderFactory());
        return stream;
    }

    @Override
    public StructType readSchema() {
        return columns;
    }

    @Override
    public String description() {
        return "sparkjournal " + options.path() + " [" + columns.simpleString() + "]"
                + (filters.isEmpty() ? "" : " pruning on " + filters.size() + " filter(s)");
    }

    @Override
    public CustomMetric[] supportedCustomMetrics() {
        return new CustomMetric[] {new SharedStringsMetric(), new PageBytesCheckedMetric(),
                new ForgottenEventsMetric()};
    }

    /** The driver's metrics: the committed events of forgotten nodes the read left out, as the
     *  batch plan found them or, for a stream's micro-batch, as its last trigger did. */
    @Override
    public synchronized CustomTaskMetric[] reportDriverMetrics() {
        return new CustomTaskMetric[] {ForgottenEventsMetric.of(stream != null ? stream.forgottenEvents()
                : forgottenEvents)};
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    @Override
    public synchronized InputPartition[] planInputPartitions() {
        if (planned == null) {
            ConnectorBuild.requireOnExecutors(SparkSession.active().sparkContext(),
                    "spark.read.format('sparkjournal')");
            LanePlanner.Planned plan = LanePlanner.plan(SparkSession.active().sparkContext(), options, journal,
                    "spark.read.format('sparkjournal')");
            planned = plan.lanes().toArray(new InputPartition[0]);
            forgottenEvents = plan.forgotten().events();
        }
        return planned.clone();
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new LaneReaderFactory(options, journal, columns, filters);
    }
}
