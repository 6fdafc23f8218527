package io.sparkjournal.spark;

import java.util.logging.Logger;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;

/**
 * A {@code writeStream.format("sparkjournal")} stream written by JVM tasks
 * and decided by this driver in Java: micro-batch {@code epochId} is batch
 * epochId of the writer (txnAppId, else Spark's stable query id:
 * {@link JournalWrite}).
 *
 * <p>{@link #commit}: a batch done already (a replay after a restart whose
 * decision landed) records nothing, its tasks having written nothing; else
 * the decision naming the tasks' transactions, the commit point. A
 * micro-batch no task wrote records nothing unless the writer is named by
 * txnAppId (as the Python data source). {@link #abort} records nothing:
 * presumed abort, the batch's prepared data stays invisible and Spark retries
 * the same epoch id, whose decision then leaves the old transactions out.
 *
 * <p>COMMIT records in the lanes are not written after the decision (readers
 * and each lane's next writer resolve prepared transactions from the commit
 * log); commit-log checkpoints are left to maintenance ({@code sparkjournal
 * compact}, the jobs' {@code maintain}).
 *
 * <p>Crash behaviour: the driver killed between the tasks' PREPAREs and the
 * decision leaves nothing of the batch visible, and Spark replays the same
 * epoch from its checkpoint; killed after the decision, the replay finds the
 * batch done and writes nothing.
 */
final class JournalStreamingWrite implements StreamingWrite {

    private static final Logger LOG = Logger.getLogger("sparkjournal.commit");
    private final TaskPlan plan;
    private final boolean named;

    JournalStreamingWrite(TaskPlan plan, boolean named) {
        this.plan = plan;
        this.named = named;
    }

    @Override
    public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
        return new JournalWriterFactory(plan);
    }

    @Override
    public void commit(long epochId, WriterCommitMessage[] messages) {
        JournalBatchWrite.decide(JournalWrite.log(plan), plan.query(), epochId, messages, named);
    }

    @Override
    public void abort(long epochId, WriterCommitMessage[] messages) {
        LOG.warning("batch " + epochId + " of the stream into " + plan.path() + " (query "
                + plan.query() + ") aborted; it is retried under the same id");
    }
}
