package io.sparkjournal.spark;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkjournal.events.CommitLog;
import io.sparkjournal.events.CommitLogWriter;
import io.sparkjournal.events.Decision;
import io.sparkjournal.events.DriverCommit;
import io.sparkjournal.events.LogCheckpointer;
import io.sparkjournal.events.Resolver;
import io.sparkjournal.format.Constants;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;

/**
 * The driver's half of a JVM write, batch or stream: it hands the tasks
 * their plan ({@link JournalWriterFactory}) and decides each batch in Java
 * ({@link DriverCommit}) in the commit log (COMMIT_LOG.md), as a Python
 * driver decides in it. Which
 * writer and batch a write is: {@link JournalWrite}.
 *
 * <p>Commit: a batch done already (a replay whose decision landed, a
 * txnVersion committed before, or a later batch of the writer) records
 * nothing and logs one line saying so, its tasks having written nothing;
 * else the decision naming the tasks' transactions, the commit point. A
 * stream's micro-batch no task wrote records nothing unless the writer is
 * named by txnAppId (COMMIT_LOG.md, "The view": batch ids may have gaps); a
 * batch write always
 * records one.
 *
 * <p>Abort: a stream's records nothing (presumed abort: the batch's prepared
 * data stays invisible and Spark retries the same epoch id, whose decision
 * leaves the old transactions out); so does a batch write named by
 * txnAppId/txnVersion (a retry with the same version writes it again); an
 * unnamed batch write records an empty decision, so its prepared
 * transactions are aborted at once (COMMIT_LOG.md, "Outcome of a prepared
 * transaction", rule 1).
 *
 * <p>After a decision: the commit log's checkpoint and retention, in a
 * daemon thread of their own, once commitLogCheckpointInterval entries are
 * past the newest checkpoint ({@link LogCheckpointer}; never failing a
 * batch). Left to others, by design: COMMIT records in the lanes after the
 * decision (readers and each lane's next writer resolve prepared
 * transactions from the commit log).
 *
 * <p>Crash behaviour: the driver killed between the tasks' PREPAREs and the
 * decision leaves nothing of the batch visible, and Spark replays it (a
 * stream from its checkpoint; a batch job when retried); killed after the
 * decision, the replay finds the batch done and writes nothing.
 */
final class JournalDriverWrite implements BatchWrite, StreamingWrite {

    private static final Logger LOG = Logger.getLogger("sparkjournal.commit");
    private static final ObjectMapper JSON = new ObjectMapper();
    private final TaskPlan plan;
    private final boolean named;          // by txnAppId (and, in a batch write, txnVersion)

    JournalDriverWrite(TaskPlan plan, boolean named) {
        this.plan = plan;
        this.named = named;
    }

    /** Spark's commit coordinator lets one attempt of each partition commit (both kinds). */
    @Override
    public boolean useCommitCoordinator() {
        return true;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        return new JournalWriterFactory(plan);
    }

    @Override
    public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
        return new JournalWriterFactory(plan);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
        decide(plan.batch(), messages, true);
    }

    @Override
    public void commit(long epochId, WriterCommitMessage[] messages) {
        decide(epochId, messages, named);
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
        if (named) {
            LOG.warning("batch " + plan.batch() + " of query " + plan.query() + " (a write into "
                    + plan.path() + ") aborted: nothing of it is visible; a retry with the same "
                    + "txnVersion writes it again");
            return;
        }
        try {
            CommitLog log = log();
            if (!DriverCommit.done(log, plan.query(), plan.batch())) {
                new CommitLogWriter(log).record(plan.query(), plan.batch(), List.of(),
                        log.view().writeEpoch(plan.query(), plan.batch()), false);
            }
        } catch (IOException error) {
            throw new UncheckedIOException(error.getMessage(), error);
        }
    }

    @Override
    public void abort(long epochId, WriterCommitMessage[] messages) {
        LOG.warning("batch " + epochId + " of the stream into " + plan.path() + " (query "
                + plan.query() + ") aborted; it is retried under the same id");
    }

    /** The decision of batch {@code batch} (see the class); {@code always}: even with no task
     *  that wrote. */
    private void decide(long batch, WriterCommitMessage[] messages, boolean always) {
        String query = plan.query();
        try {
            List<Map<String, Object>> written = new ArrayList<>();
            for (WriterCommitMessage message : messages) {
                if (message instanceof JournalCommitMessage journal && journal.json() != null) {
                    written.add(JSON.readValue(journal.json(), new TypeReference<Map<String, Object>>() { }));
                }
            }
            CommitLog log = log();
            if (DriverCommit.done(log, query, batch)) {
                LOG.info("batch " + batch + " of query " + query + ": already committed, skipped");
                return;
            }
            if (written.isEmpty() && !always) {
                return;
            }
            Decision decision = DriverCommit.commit(log, query, batch, written);
            long dropped = 0;
            List<String> droppedLanes = new ArrayList<>();
            for (Map<String, Object> message : written) {
                long rows = ((Number) message.getOrDefault("dropped", 0L)).longValue();
                if (message.get(Constants.EntryTx.TX) == null && rows > 0) {
                    dropped += rows;
                    droppedLanes.add(message.get(Constants.EntryTx.ROOT) + "/"
                            + message.get(Constants.EntryTx.LANE));
                }
            }
            String line = "batch " + batch + " of query " + query + ": " + decision.rows() + " rows from "
                    + written.size() + " JVM tasks committed (epoch " + decision.epoch() + ")";
            if (dropped > 0) {
                LOG.warning(line + "; " + dropped + " rows DROPPED: lanes full ("
                        + String.join(", ", droppedLanes) + "; addressFullPolicy DROP)");
            } else {
                LOG.info(line);
            }
            checkpointAfterDecision(log);
        } catch (IOException error) {
            throw new UncheckedIOException(error.getMessage(), error);
        }
    }

    /**
     * Starts the log's checkpoint and retention in a thread of its own when
     * commitLogCheckpointInterval entries are past the newest checkpoint
     * ({@link LogCheckpointer}; COMMIT_LOG.md, "Checkpoints", "Versions"); the
     * batch is committed already, so nothing here fails it: a failure is a
     * WARNING, and the next decision tries again.
     */
    private void checkpointAfterDecision(CommitLog log) {
        try {
            long interval = option("commitLogCheckpointInterval");
            if (interval > 0) {
                LogCheckpointer.forLog(log).afterDecision(LogCheckpointer.entriesPastCheckpoint(log.view()),
                        interval, option("commitLogRetainBatches"), option("commitLogRetainTime"));
            }
        } catch (Exception | LinkageError error) {
            LOG.warning("commit log " + plan.logUri() + ": cannot start its checkpoint (" + error
                    + "); the next decided batch tries again");
        }
    }

    /** A resolved journal option of the plan (WriteOptions: a whole number; ns for a time). */
    private long option(String name) {
        return ((Number) plan.options().get(name)).longValue();
    }

    /** The commit log, the write's modes registered for what the driver makes in it
     *  ({@link JournalPaths#useModes}). */
    private CommitLog log() throws IOException {
        JournalPaths.useModes(plan.path(), plan.options());
        return Resolver.shared().commitLog(plan.logUri());
    }
}
