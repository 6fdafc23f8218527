package io.sparkjournal.spark;

import io.sparkjournal.events.ArrowBytes;
import io.sparkjournal.events.BodyBuffer;
import io.sparkjournal.events.EventsBodyWriter;
import io.sparkjournal.events.TaskWrite;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * A JVM task's rows as encoded event bodies, a chunk at a time: rows are
 * {@link #add}ed into one reused Arrow root (Spark's {@link ArrowWriter}) until
 * the chunk holds {@code chunkRows}; {@link #seal} ends the chunk, cut into
 * pieces as {@code event_records.pieces} cuts a batch against the plan's
 * largest body; {@link #next} encodes them one by one ({@link EventsBodyWriter},
 * tagged with the query and batch) until the chunk is used up and takes rows
 * again. So a partition is never held whole: at most one chunk and two bodies.
 *
 * <p>Contract: a body handed out by {@link #next} lives in one of two buffers,
 * taken in turn: it stays unchanged until the second call after it (so the
 * caller may append it while the next is made, {@link
 * io.sparkjournal.events.AppendPipeline}). Memory is a
 * child allocator of Spark's Arrow root allocator, released by {@link #close},
 * which the task calls whether it succeeds or fails. Not thread-safe.
 */
final class ArrowPieces implements AutoCloseable {

    private final BufferAllocator allocator;
    private final VectorSchemaRoot root;
    private final ArrowWriter writer;
    private final TaskPlan plan;
    private final BodyBuffer[] bodies = new BodyBuffer[2];
    private int turn;                     // the buffer the next body is written into
    private int count;                    // rows added to the open chunk
    private int filled;                   // rows of the sealed chunk
    private int start;                    // the sealed chunk's next piece starts here
    private int step;                     // rows per piece of the sealed chunk
    private long handedOut;               // rows in bodies handed out

    ArrowPieces(TaskPlan plan, long taskAttemptId) {
        this.plan = plan;
        this.allocator = ArrowUtils.rootAllocator().newChildAllocator(
                "sparkjournal-sink-task-" + taskAttemptId, 0, Long.MAX_VALUE);
        try {
            this.root = VectorSchemaRoot.create(
                    SparkArrowSchema.toArrow(plan.schema(), plan.timezone()), allocator);
        } catch (RuntimeException | Error failed) {
            allocator.close();
            throw failed;
        }
        this.writer = ArrowWriter.create(root);
        int capacity = (int) Math.min(plan.maxBody(), 64 << 20);
        this.bodies[0] = new BodyBuffer(capacity);
        this.bodies[1] = new BodyBuffer(capacity);
    }

    /** Adds a row to the open chunk; true when the chunk is full (then {@link #seal} it). */
    boolean add(InternalRow row) {
        if (count == 0) {
            writer.reset();
        }
        writer.write(row);
        return ++count >= plan.chunkRows();
    }

    /** Ends the open chunk (possibly empty): its pieces are then handed out by {@link #next}. */
    void seal() {
        if (count == 0) {
            filled = 0;
            start = 0;
            return;
        }
        writer.finish();
        filled = count;
        count = 0;
        start = 0;
        step = EventsBodyWriter.rowsPerPiece(root, plan.maxBody());
    }

    /** The next piece of the sealed chunk, encoded; null when the chunk is used up. */
    TaskWrite.Body next() {
        if (start >= filled) {
            return null;
        }
        int length = Math.min(step, filled - start);
        long bytes = 0;
        for (FieldVector vector : root.getFieldVectors()) {
            bytes += ArrowBytes.of(vector, start, length);
        }
        BodyBuffer body = bodies[turn];
        turn ^= 1;
        body.clear();
        try {
            EventsBodyWriter.write(root, start, length, plan.query(), plan.batch(), body);
        } catch (IOException impossible) {             // it writes to memory
            throw new UncheckedIOException(impossible);
        }
        start += length;
        handedOut += length;
        if (start >= filled) {
            filled = 0;
            start = 0;
        }
        return new TaskWrite.Body(body.body(), length, bytes);
    }

    /** Rows in the bodies handed out so far. */
    long handedOut() {
        return handedOut;
    }

    @Override
    public void close() {
        try {
            root.close();
        } finally {
            allocator.close();
        }
    }
}
