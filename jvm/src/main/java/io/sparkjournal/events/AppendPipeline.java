package io.sparkjournal.events;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * A task's appends on a thread of their own, one body behind the task's
 * thread: while body N is appended (copied into the record, CRC'd, written,
 * and, for a body larger than the write buffer, synced), the task's thread
 * converts rows and encodes body N+1. At most one append is in flight, and
 * bodies are appended in the order given.
 *
 * <p>Contract: a body given to {@link #append} must stay unchanged until the
 * next {@link #append} or {@link #finish} returns (a producer alternating two
 * buffers meets it); {@link #finish} returns once every body is appended, or
 * throws the first append's failure, after which the {@link TaskWrite} has
 * already rolled back and let its lane go ({@link TaskWrite#append}). The
 * task's thread calls nothing else of the TaskWrite while an append is in
 * flight; {@link #finish} (or {@link #drain} on a failure of the task's own)
 * is called before {@link TaskWrite#prepare} or {@link TaskWrite#abort}.
 *
 * <p>Crash behaviour: nothing beyond {@link TaskWrite}'s: the PREPARE is
 * appended and synced by the task's thread after {@link #finish}, so a task
 * killed before it leaves an open transaction that the lane's next writer
 * rolls back. An interrupt (Spark killing the task) is not let through while
 * an append is in flight: the wait finishes that append (milliseconds), then
 * the interrupt is restored and reported.
 */
public final class AppendPipeline {

    private static final ExecutorService APPENDERS = Executors.newCachedThreadPool(work -> {
        Thread thread = new Thread(work, "sparkjournal-task-append");
        thread.setDaemon(true);
        return thread;
    });

    private final TaskWrite task;
    private Future<?> inFlight;

    public AppendPipeline(TaskWrite task) {
        this.task = task;
    }

    /** Starts appending {@code body} once the body before it is appended (see the class);
     *  throws that body's failure instead. */
    public void append(TaskWrite.Body body) throws IOException {
        finish();
        inFlight = APPENDERS.submit(() -> {
            task.append(body);
            return null;
        });
    }

    /** Waits for the append in flight; throws its failure. */
    public void finish() throws IOException {
        Future<?> waited = inFlight;
        inFlight = null;
        if (waited == null) {
            return;
        }
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    waited.get();
                    break;
                } catch (InterruptedException again) {
                    interrupted = true;               // finish the append first (see the class)
                }
            }
        } catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IOException(cause);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (interrupted) {
            throw new InterruptedIOException("the task was interrupted while its bodies were"
                    + " appended");
        }
    }

    /** Waits for the append in flight, keeping its failure as suppressed by {@code failure}:
     *  the task's own failure is what it reports. */
    public void drain(Throwable failure) {
        try {
            finish();
        } catch (IOException | RuntimeException | Error appendFailed) {
            if (appendFailed != failure) {
                failure.addSuppressed(appendFailed);
            }
        }
    }
}
