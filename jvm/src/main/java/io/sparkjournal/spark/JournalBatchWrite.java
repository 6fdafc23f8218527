package io.sparkjournal.spark;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkjournal.events.CommitLog;
import io.sparkjournal.events.CommitLogWriter;
import io.sparkjournal.events.Decision;
import io.sparkjournal.events.DriverCommit;
import io.sparkjournal.events.EventsException;
import io.sparkjournal.format.FormatVersionException;
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

/**
 * A {@code df.write.format("sparkjournal")} batch written by JVM tasks and
 * decided by this driver in Java: one batch of one writer (see
 * {@link JournalWrite} for which).
 *
 * <p>{@link #commit}: if the batch is done already (a txnVersion committed
 * before, or a later one of the same txnAppId) it records nothing and logs
 * one line saying so (its tasks wrote nothing either); else the decision
 * naming the tasks' transactions ({@link DriverCommit}), the commit point.
 * {@link #abort}: a write named by txnAppId/txnVersion records nothing
 * (presumed abort: its prepared data stays invisible, and a retry with the
 * same version writes it again); an unnamed one records an empty decision, so
 * its prepared transactions are aborted at once (Python's
 * {@code JournalBatchWriter.abort}).
 *
 * <p>COMMIT records in the lanes are not written after the decision: readers
 * and each lane's next writer resolve prepared transactions from the commit
 * log. Commit-log checkpoints are left to maintenance ({@code sparkjournal
 * compact}, the jobs' {@code maintain}).
 *
 * <p>Crash behaviour: the driver killed between the tasks' PREPAREs and the
 * decision leaves nothing visible (a retried job writes new transactions; the
 * old ones are aborted by the decision that leaves them out, or stay
 * undecided for {@code sparkjournal abort} when the job is never retried);
 * killed after it, the write is committed and a retry with the same
 * txnVersion finds it done.
 */
final class JournalBatchWrite implements BatchWrite {

    private static final Logger LOG = Logger.getLogger("sparkjournal.commit");
    private static final ObjectMapper JSON = new ObjectMapper();
    private final TaskPlan plan;
    private final boolean named;

    JournalBatchWrite(TaskPlan plan, boolean named) {
        this.plan = plan;
        this.named = named;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
        return new JournalWriterFactory(plan);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {
        decide(JournalWrite.log(plan), plan.query(), plan.batch(), messages, true);
    }

    @Override
    public void abort(WriterCommitMessage[] messages) {
        if (named) {
            LOG.warning("batch " + plan.batch() + " of query " + plan.query() + " (a write into "
                    + plan.path() + ") aborted: nothing of it is visible; a retry with the same "
                    + "txnVersion writes it again");
            return;
        }
        CommitLog log = JournalWrite.log(plan);
        try {
            if (!DriverCommit.done(log, plan.query(), plan.batch())) {
                new CommitLogWriter(log).record(plan.query(), plan.batch(), List.of(),
                        log.view().writeEpoch(plan.query(), plan.batch()), false);
            }
        } catch (EventsException | FormatVersionException error) {
            throw new UncheckedIOException(error);
        }
    }

    /**
     * The driver's decision of a batch (shared with streams): skipped when the
     * batch is done; else recorded, unless no task wrote and {@code always} is
     * false (a stream's empty micro-batch leaves a gap, COMMIT_LOG.md).
     */
    static void decide(CommitLog log, String query, long batch, WriterCommitMessage[] messages,
                       boolean always) {
        try {
            List<Map<String, Object>> written = new ArrayList<>();
            for (WriterCommitMessage message : messages) {
                if (message instanceof JournalCommitMessage journal && journal.json() != null) {
                    written.add(JSON.readValue(journal.json(), new TypeReference<Map<String, Object>>() { }));
                }
            }
            if (DriverCommit.done(log, query, batch)) {
                LOG.info("batch " + batch + " of query " + query + ": already committed, skipped");
                return;
            }
            if (written.isEmpty() && !always) {
                return;
            }
            Decision decision = DriverCommit.commit(log, query, batch, written);
            LOG.info("batch " + batch + " of query " + query + ": " + decision.rows() + " rows from "
                    + written.size() + " JVM tasks committed (epoch " + decision.epoch() + ")");
        } catch (IOException error) {
            throw new UncheckedIOException(error.getMessage(), error);
        }
    }
}
