package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.DiskModes;
import io.sparkjournal.journal.LaneAppender;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.logging.Logger;

/**
 * Phase one of the two-phase commit for one Spark task, in the JVM, for
 * bodies already encoded (EVENTS bodies: Arrow IPC streams tagged with query,
 * batch and statistics, EVENTS.md, "EVENTS records").
 *
 * <p>{@link #open} then {@link #append} per body and {@link #prepare} (or
 * {@link #abort}), the push API a DataSource V2 {@code DataWriter} drives, and
 * {@link #run} over an iterator of bodies, which uses it: {@link #open}
 * refuses journal options the JVM writer does not enforce
 * ({@link TaskWriteOptions}); refuses when the commit log at the plan's URI has
 * another LOG_ID than the driver's (the path is then another folder on this
 * host; the same message as a Python task gives); returns null when the batch
 * is done already (a replay: a commit entry of it exists, or a batch at or
 * after it is committed in the log's view, COMMIT_LOG.md) or when no body has
 * rows; otherwise takes the batch's write epoch from that view
 * ({@link LogView#writeEpoch}: one more than an abort entry's), refuses a root
 * whose NODE_ID that view's forgotten nodes hold (COMMIT_LOG.md, "Forgotten
 * nodes": writers refuse it; checked before a lane is opened, and again on the
 * NODE_ID of a kept writer, which is then closed: nothing is written), opens a
 * lane of the node root ({@link RootLanes}), ends the lane's decided prepared
 * transactions ({@link PreparedEnding}), appends every body as an ADD_TX record
 * of user type EVENTS (1) with fresh record ids in ONE new transaction,
 * PREPAREs it with the task's XID ({@link XidEncoder}, carrying the write epoch
 * and the time of the PREPARE) synced, and returns the commit message the
 * driver reads, whichever language runs it, field for field as a Python task
 * sends it (tx, records, rows, bytes, epoch; write_ms the time spent
 * appending, prepare_ms the PREPARE's append and sync). An abort entry landing
 * after the epoch was taken aborts the transaction (the driver, finding its
 * tasks' epochs differ or its entry's name taken, fails the batch). The lane's
 * writer goes back to this JVM's pool when the task succeeded (the next task on
 * this root takes it with no load, {@link LaneWriters}), and is closed when it
 * failed.
 *
 * <p>Crash behaviour: killed before the PREPARE is durable, the transaction is
 * open and the lane's next writer (Python or JVM) rolls it back at its open;
 * killed after, it stays prepared and the commit log decides it. A failure
 * before the PREPARE is durable rolls the transaction back at once (a
 * ROLLBACK, made durable by the writer's close); if even that fails the next
 * opener rolls it back. Failures
 * are {@link SinkTaskException}s naming the batch, the host and the lane.
 *
 * <p>A full lane ({@link FullLanes}, asked after the lane is taken and its
 * decided PREPAREs ended, before the first record): FAIL fails the task with
 * nothing appended; DROP appends nothing and the message counts the task's
 * rows as dropped (tx null, as a Python task's); BLOCK gives the lane up and
 * waits for space, then takes a lane again; PAGE writes on.
 *
 * <p>Modes: the task registers its node root with the write's dirMode and
 * fileMode ({@link DiskModes#use}) before it makes
 * anything there: the root, NODE_ID, lanes, locks, data files and large
 * bodies get them.
 *
 * <p>Not done here, but by the Python task writer: carrying out the lane's pending
 * maintenance requests (EVENTS.md, "Lane requests": a writer that finds some
 * in its lane gives the lane up to maintenance and writes elsewhere,
 * {@link LaneWriters}; readers apply pending deletes meanwhile).
 */
public final class TaskWrite {

    private static final Logger LOG = Logger.getLogger("sparkjournal.task");
    /** User record type of event records (EVENTS.md, "EVENTS records": user type 1). */
    public static final int EVENTS = 1;
    /** A task of the sink could not write its part of a batch (SinkTaskError on the Python side). */
    public static class SinkTaskException extends EventsException {
        private static final long serialVersionUID = 1L;

        public SinkTaskException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** What every task of one write needs: the write's plan, query and batch known. */
    public record Plan(String path, Map<String, ?> options, String logUri, String logId,
                       String query, long batch) {
    }

    /** Spark's TaskContext facts: partition id, attempt number, task attempt id. */
    public record Identity(long partition, long attempt, long task) {
    }

    /** One encoded body, with the rows it holds and its Arrow size ({@link ArrowBytes}). */
    public record Body(ByteBuffer ipc, long rows, long bytes) {
    }

    private final Plan plan;
    private final Identity identity;
    private final TaskWriteOptions options;
    private final Resolver resolver;
    private final RootLanes.Opened opened;
    private final LaneAppender appender;
    private final long epoch;
    private final String host;
    private final String where;
    private long tx;
    private long records;
    private long rows;
    private long bytes;
    private long appendNs;
    private boolean finished;             // prepared, or given up: the lane writer is gone
    private boolean dropping;             // addressFullPolicy DROP on a full lane: rows counted only

    private TaskWrite(Plan plan, Identity identity, TaskWriteOptions options, Resolver resolver,
                      RootLanes.Opened opened, long epoch, String host, String where) {
        this.plan = plan;
        this.identity = identity;
        this.options = options;
        this.resolver = resolver;
        this.opened = opened;
        this.appender = opened.appender();
        this.epoch = epoch;
        this.host = host;
        this.where = where;
    }

    /**
     * Writes the task's bodies as one prepared transaction (see the class);
     * the commit message (fields in the order a Python task writes them), or
     * null when there is nothing to write. The push API ({@link #open},
     * {@link #append}, {@link #prepare}) over an iterator, each body appended
     * while the iterator makes the next ({@link AppendPipeline}): a body
     * stays unchanged until the second {@code next()} after it.
     */
    public static Map<String, Object> run(Plan plan, Identity identity, Iterator<Body> bodies,
                                          String executorId) throws IOException {
        TaskWrite task = open(plan, identity, executorId);
        if (task == null) {
            return null;                          // a replay of a committed batch: nothing to write
        }
        AppendPipeline appends = new AppendPipeline(task);
        try {
            while (bodies.hasNext()) {
                appends.append(bodies.next());
            }
            appends.finish();
        } catch (IOException | RuntimeException | Error failed) {
            appends.drain(failed);
            throw task.fail(failed);
        }
        return task.prepare();
    }

    /**
     * Opens the task's write (the checks, the lane, the decided PREPAREs
     * ended: see the class), or returns null when the batch is done: the task
     * writes nothing. The caller then {@link #append}s bodies and ends with
     * {@link #prepare} or {@link #abort}; nothing of it is visible before the
     * commit log decides its batch.
     */
    public static TaskWrite open(Plan plan, Identity identity, String executorId) throws IOException {
        String host = RootLanes.hostName();
        TaskWriteOptions options;
        try {
            options = TaskWriteOptions.of(plan.options());
        } catch (IllegalArgumentException refused) {
            throw new SinkTaskException(refused.getMessage(), refused);
        }
        Resolver resolver = Resolver.shared();
        CommitLog log = resolver.commitLog(plan.logUri());
        checkSameLog(plan, log, host);
        LogView view = log.view();
        if (view.done(plan.query(), plan.batch()) || log.hasEntry(plan.query(), plan.batch())) {
            return null;
        }
        long epoch = view.writeEpoch(plan.query(), plan.batch());
        String where = "batch " + plan.batch() + " of query " + plan.query() + " on host " + host;
        Path root;
        String node;
        try {
            root = RootLanes.resolveRoot(plan.path(), host, executorId);
            DiskModes.use(root, options.modes());             // before anything is made there
            RootLanes.ensureRoot(root, options.createDirs());
            node = NodeIds.read(root);
        } catch (IOException | RuntimeException error) {
            throw new SinkTaskException(where + ": cannot open a lane of " + plan.path() + ": "
                    + error.getMessage(), error);
        }
        refuseForgotten(view, node, root, where);
        while (true) {
            RootLanes.Opened opened;
            try {
                opened = LaneWriters.take(root, host, options.appendConfig());
            } catch (IOException | RuntimeException error) {
                throw new SinkTaskException(where + ": cannot open a lane of " + plan.path() + ": "
                        + error.getMessage(), error);
            }
            if (!opened.node().equals(node)) {
                try {
                    refuseForgotten(view, opened.node(), root, where);  // a kept writer of a root since replaced
                } catch (SinkTaskException refused) {
                    LaneWriters.drop(opened);
                    throw refused;
                }
            }
            TaskWrite task = new TaskWrite(plan, identity, options, resolver, opened, epoch, host,
                    where + ", lane " + opened.directory());
            FullLanes.Verdict verdict;
            try {
                PreparedEnding.end(task.appender, opened.node(), opened.lane(), resolver);
                verdict = FullLanes.admit(opened.root(), opened.directory(), options.limits(), where);
            } catch (IOException | RuntimeException | Error failed) {
                throw task.fail(failed);
            }
            if (verdict != FullLanes.Verdict.WAIT) {
                task.dropping = verdict == FullLanes.Verdict.DROP;
                return task;
            }
            task.finished = true;                 // BLOCK: the lane goes to maintenance meanwhile
            LaneWriters.drop(opened);
            try {
                FullLanes.waitForSpace(opened.root(), opened.directory(), options.limits(), where);
            } catch (IOException failed) {
                throw new SinkTaskException(failed.getMessage(), failed);
            }
        }
    }

    /** Appends one body to the task's transaction (begun by the first body with rows). */
    public void append(Body body) throws IOException {
        if (body.rows() <= 0) {
            return;                               // no piece is empty (EVENTS.md, "Pieces")
        }
        if (dropping) {
            rows += body.rows();                  // written nowhere: the message counts them
            return;
        }
        try {
            long started = System.nanoTime();
            if (tx == 0) {
                tx = appender.nextTxId();
            }
            appender.appendAddTx(tx, appender.nextRecordId(), EVENTS, body.ipc());
            appendNs += System.nanoTime() - started;
            records++;
            rows += body.rows();
            bytes += body.bytes();
        } catch (IOException | RuntimeException | Error failed) {
            throw fail(failed);
        }
    }

    /**
     * PREPAREs the transaction, synced, and gives the lane writer back to the
     * pool; the commit message, or null when no body had rows.
     */
    public Map<String, Object> prepare() throws IOException {
        long written = System.nanoTime();
        long done;
        try {
            if (tx != 0) {
                appender.prepare(tx, XidEncoder.encode(plan.logUri(), plan.query(), plan.batch(),
                        identity.partition(), identity.attempt(), identity.task(), epoch,
                        System.currentTimeMillis()), true);
            }
            done = System.nanoTime();
        } catch (IOException | RuntimeException | Error failed) {
            throw fail(failed);
        }
        finished = true;
        LaneWriters.give(opened, options.appendConfig(), options.laneIdleNanos());
        if (dropping) {
            return rows == 0 ? null : message(written, done);
        }
        return tx == 0 ? null : message(written, done);
    }

    /**
     * Gives the task up before its PREPARE: its transaction is rolled back and
     * the lane writer closed. After {@link #prepare} nothing is done (the
     * prepared transaction is the commit log's to decide).
     */
    public void abort() {
        if (!finished) {
            abandon(new SinkTaskException(where + ": the task was aborted", null));
        }
    }

    /** A failure before the PREPARE is durable: rolls the transaction back, closes the lane
     *  writer, and returns what to throw (Errors are thrown as they are). */
    private IOException fail(Throwable error) {
        abandon(error);
        if (error instanceof Error fatal) {
            throw fatal;
        }
        if (error instanceof SinkTaskException refused) {
            return refused;
        }
        return new SinkTaskException(where + ": " + error.getClass().getSimpleName() + ": "
                + error.getMessage(), error);
    }

    private void abandon(Throwable error) {
        if (finished) {
            return;
        }
        finished = true;
        if (tx != 0) {
            try {
                appender.rollback(tx, false);     // made durable by the close that follows
            } catch (IOException | RuntimeException failed) {
                // It never got a record, or the appender stopped: the next opener rolls it back.
                error.addSuppressed(failed);
            }
        }
        LaneWriters.drop(opened);
    }

    private Map<String, Object> message(long written, long done) {
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("query", plan.query());
        message.put("batch", plan.batch());
        message.put(Constants.EntryTx.NODE, opened.node());
        message.put(Constants.EntryTx.HOST, host);
        message.put(Constants.EntryTx.ROOT, opened.root().toString());
        message.put(Constants.EntryTx.LANE, opened.lane());
        message.put(Constants.EntryTx.TX, dropping ? null : tx);
        message.put(Constants.EntryTx.RECORDS, records);
        message.put(Constants.EntryTx.ROWS, dropping ? 0L : rows);
        message.put(Constants.EntryTx.BYTES, bytes);
        message.put("partition", identity.partition());
        message.put("attempt", identity.attempt());
        message.put("write_ms", appendNs / 1e6);
        message.put("prepare_ms", dropping ? 0.0 : (done - written) / 1e6);
        message.put("dropped", dropping ? rows : 0L);
        message.put("epoch", epoch);
        return message;
    }

    /** Refuses root {@code root} of NODE_ID {@code node} when the view lists the node as forgotten
     *  (COMMIT_LOG.md, "Forgotten nodes"), as the task's failure naming the batch and host. */
    private static void refuseForgotten(LogView view, String node, Path root, String where)
            throws SinkTaskException {
        try {
            ForgottenNode.refuseRoot(view.forgotten(), node, root.toString());
        } catch (EventsException refused) {
            throw new SinkTaskException(where + ": " + refused.getMessage(), refused);
        }
    }

    /**
     * Refuses a commit log whose LOG_ID is not the driver's: the log path names
     * another folder on this host (same message as a Python task's).
     */
    static void checkSameLog(Plan plan, CommitLog log, String host) throws IOException {
        if (plan.logId() == null) {
            return;
        }
        String found = log.logId();
        if (!plan.logId().equals(found)) {
            throw new SinkTaskException("the commit log " + plan.logUri() + " as host " + host
                    + " sees it is not the one the driver writes (LOG_ID "
                    + (found == null || found.isEmpty() ? "absent" : found) + " here, "
                    + plan.logId() + " on the driver): that path is a different folder on each "
                    + "host, so no batch written here could be seen committed. On a cluster, give "
                    + "commitLog a location the driver and every host share (hdfs://, s3://, a "
                    + "shared mount), next to the checkpoint", null);
        }
    }
}
