package io.sparkjournal.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkjournal.events.AppendPipeline;
import io.sparkjournal.events.TaskWrite;
import java.io.IOException;
import java.util.Map;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * One task of a JVM write: phase one of the two-phase commit, pushed a row at
 * a time, as {@link JvmSinkWrite}'s tasks write (the same {@link ArrowPieces}
 * and {@link TaskWrite}).
 *
 * <p>Contract: the first row opens the task's write ({@link TaskWrite#open}:
 * options, LOG_ID, the lane, decided PREPAREs ended); if the batch is done
 * already (a replay) the task writes nothing and its message is null. Rows
 * fill a chunk; each full chunk is cut into pieces appended at once, so a
 * partition is never held whole; each piece is appended on the task's
 * {@link AppendPipeline} thread while the next is encoded. {@link #commit}
 * appends the last chunk, waits for the appends,
 * PREPAREs the transaction (synced) and returns the task message
 * ({@link JournalCommitMessage}); {@link #abort} rolls an unprepared
 * transaction back. Fault injection for tests as {@link JvmSinkWrite}'s (the
 * local property {@value JvmSinkWrite#INJECT_FAILURE}: "afterWrite:P",
 * "afterPrepare:P").
 *
 * <p>Crash behaviour: killed before the PREPARE is durable, the transaction
 * is open and the lane's next writer rolls it back; after, it stays prepared
 * and invisible until the driver's decision names it, or is aborted by the
 * decision of a replay that does not.
 */
final class JournalDataWriter implements DataWriter<InternalRow> {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final TaskPlan plan;
    private final TaskWrite.Identity identity;
    private final String inject;
    private TaskWrite task;
    private AppendPipeline appends;
    private ArrowPieces pieces;
    private boolean skipped;              // the batch is done: nothing is written

    JournalDataWriter(TaskPlan plan, int partitionId, long taskId) {
        this.plan = plan;
        TaskContext context = TaskContext.get();
        this.identity = new TaskWrite.Identity(partitionId, context == null ? 0 : context.attemptNumber(),
                context == null ? taskId : context.taskAttemptId());
        this.inject = context == null ? null : context.getLocalProperty(JvmSinkWrite.INJECT_FAILURE);
    }

    @Override
    public void write(InternalRow row) throws IOException {
        if (skipped) {
            return;
        }
        if (task == null) {
            task = TaskWrite.open(plan.taskPlan(), identity,
                    SparkEnv.get() == null ? "driver" : SparkEnv.get().executorId());
            if (task == null) {
                skipped = true;
                return;
            }
            pieces = new ArrowPieces(plan, identity.task());
            appends = new AppendPipeline(task);
        }
        if (pieces.add(row)) {
            flush();
        }
    }

    private void flush() throws IOException {
        pieces.seal();
        for (TaskWrite.Body body = pieces.next(); body != null; body = pieces.next()) {
            appends.append(body);             // appended while the next piece is encoded
        }
    }

    @Override
    public WriterCommitMessage commit() throws IOException {
        if (task == null) {
            return new JournalCommitMessage(null);
        }
        flush();
        appends.finish();
        String injected = pieces.handedOut() > 0
                ? JvmSinkWrite.injected(inject, identity, "afterWrite") : null;
        if (injected != null) {
            throw new JvmSinkWrite.InjectedFailure(injected);      // all appended, no PREPARE: abort() rolls back
        }
        Map<String, Object> message = task.prepare();
        injected = JvmSinkWrite.injected(inject, identity, "afterPrepare");
        if (message != null && injected != null) {
            throw new TaskWrite.SinkTaskException(injected, null);
        }
        return new JournalCommitMessage(message == null ? null : JSON.writeValueAsString(message));
    }

    @Override
    public void abort() {
        if (task != null) {
            appends.drain(new IOException("the task was aborted"));
            task.abort();
        }
    }

    @Override
    public void close() {
        if (pieces != null) {
            pieces.close();
        }
    }
}
