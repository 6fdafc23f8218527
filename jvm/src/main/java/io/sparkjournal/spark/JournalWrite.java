package io.sparkjournal.spark;

import io.sparkjournal.events.CommitLog;
import io.sparkjournal.events.CommitLogWriter;
import io.sparkjournal.events.EventsException;
import io.sparkjournal.events.Resolver;
import java.io.UncheckedIOException;
import java.util.UUID;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.internal.SQLConf;

/**
 * A JVM write's identity and the driver's checks before any task runs.
 *
 * <p>Identity (the DataSource V2 contract, Delta's idempotent-write options):
 * a stream is writer {@code txnAppId}, else Spark's query id
 * ({@link LogicalWriteInfo#queryId}: for a micro-batch stream the stable id
 * kept in the checkpoint's metadata, StreamExecution's {@code id}, not the
 * run's {@code runId}), and each micro-batch is the batch of its epoch id. A
 * batch write given {@code txnAppId} and {@code txnVersion} (both or neither)
 * is batch txnVersion of writer txnAppId, so a job retried with the same
 * version writes its rows once; without them it is batch 0 of a writer of
 * its own, {@code batch-write-<16 hex>}.
 *
 * <p>Before any task ({@link #toBatch}, {@link #toStreaming}): the commit
 * log's LOG_ID is created if absent (tasks refuse a log whose id differs:
 * a path that is another folder on each host), and the rows' schema is
 * checked against {@code schema.arrow} and evolved ({@link SchemaEvolution});
 * a refused schema fails the write naming every offending column.
 */
final class JournalWrite implements Write {

    private final LogicalWriteInfo info;
    private final WriteOptions options;

    JournalWrite(LogicalWriteInfo info, WriteOptions options) {
        this.info = info;
        this.options = options;
    }

    @Override
    public String description() {
        return "sparkjournal JVM write into " + options.path();
    }

    @Override
    public String toString() {
        return description();
    }

    @Override
    public BatchWrite toBatch() {
        if ((options.txnAppId() == null) != (options.txnVersion() == null)) {
            throw new OptionException("txnAppId and txnVersion go together: give both (this write "
                    + "is then version txnVersion of writer txnAppId, skipped if already committed) "
                    + "or neither (txnAppId=" + options.txnAppId() + ", txnVersion="
                    + options.txnVersion() + ")");
        }
        boolean named = options.txnAppId() != null;
        String query = named ? options.txnAppId()
                : "batch-write-" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        return new JournalDriverWrite(plan(query, named ? options.txnVersion() : 0), named);
    }

    @Override
    public StreamingWrite toStreaming() {
        if (options.txnVersion() != null) {
            throw new OptionException("option txnVersion=" + options.txnVersion() + " is not valid: "
                    + "txnVersion accepts nothing in a stream: its micro-batches are numbered by "
                    + "Spark (give txnAppId alone to name the writer)");
        }
        String query = options.txnAppId() != null ? options.txnAppId() : info.queryId();
        return new JournalDriverWrite(plan(query, -1), options.txnAppId() != null);
    }

    /** The tasks' plan, after the driver's checks (see the class). */
    private TaskPlan plan(String query, long batch) {
        SQLConf conf = SparkSession.active().sessionState().conf();
        String timezone = conf.sessionLocalTimeZone();
        String logUri = options.commitLog() != null ? options.commitLog()
                : JournalPaths.resolveRoot(options.path()) + "/_commits";
        // Timestamps stored with zone UTC, as every writer stores them: evolution compares
        // timestamps without their zone, and readers show the session's.
        Schema arrow = SparkArrowSchema.toArrow(info.schema(), "UTC");
        JournalPaths.useModes(options.path(), options.journal());
        try {
            CommitLog log = Resolver.shared().commitLog(logUri);
            CommitLogWriter writer = new CommitLogWriter(log);
            Schema evolved = SchemaEvolution.evolve(log.readSchema(), arrow,
                    "a write into " + options.path());
            if (evolved != null) {
                writer.writeSchema(evolved);
            }
            String logId = writer.logId();
            return TaskPlan.of(options.path(), options.journal(), logUri, logId, query, batch,
                    timezone, conf.arrowMaxRecordsPerBatch(), info.schema());
        } catch (EventsException error) {
            throw new UncheckedIOException(error.getMessage(), error);
        }
    }
}
