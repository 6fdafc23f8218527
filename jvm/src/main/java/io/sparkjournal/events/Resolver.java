package io.sparkjournal.events;

import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Phase two of the two-phase commit as a reader sees it (events/resolve.py's
 * {@code outcome}): a prepared transaction's XID ({@link BatchXid}) names its
 * batch and commit log; the transaction is
 *
 * <ul>
 *   <li>COMMITTED if that batch's decision names it,</li>
 *   <li>ABORTED if the decision exists without it (a losing task attempt, a
 *       replayed batch), or if no decision exists but a later batch of the
 *       query is decided (Spark decides batches in order, so this one never
 *       will be),</li>
 *   <li>UNDECIDED otherwise (invisible: presumed aborted),</li>
 *   <li>FOREIGN if the XID is not this sink's.</li>
 * </ul>
 *
 * One {@link CommitLog} per URI, with its cache of decisions, as Python keeps
 * one per process ({@link #shared()}). Thread-safe.
 */
public final class Resolver {

    private static final Resolver SHARED = new Resolver();

    private final ConcurrentHashMap<String, CommitLog> logs = new ConcurrentHashMap<>();

    /** The process-wide resolver (Python's module-level {@code _LOGS}). */
    public static Resolver shared() {
        return SHARED;
    }

    /** The commit log at {@code uri}, made once. */
    public CommitLog commitLog(String uri) throws CommitLogException {
        CommitLog found = logs.get(uri);
        if (found == null) {
            found = new CommitLog(uri);
            CommitLog raced = logs.putIfAbsent(uri, found);
            found = raced != null ? raced : found;
        }
        return found;
    }

    /**
     * The outcome of the transaction {@code ref} whose PREPARE carries
     * {@code xid}. Errors of the commit log ({@link CommitLogException},
     * {@link io.sparkjournal.format.FormatVersionException}, an
     * {@link EventsException} for a query id that cannot name a folder) are
     * thrown, never read as an outcome.
     */
    public Outcome outcome(byte[] xid, TxRef ref) throws IOException {
        BatchXid batch = BatchXid.decode(xid);
        if (batch == null) {
            return Outcome.FOREIGN;
        }
        CommitLog log = commitLog(batch.log());
        Decision decision = log.decision(batch.query(), batch.batch());
        if (decision != null) {
            return decision.commits(ref) ? Outcome.COMMITTED : Outcome.ABORTED;
        }
        for (long decided : log.batches(batch.query())) {
            if (decided > batch.batch()) {
                return Outcome.ABORTED;
            }
        }
        return Outcome.UNDECIDED;
    }
}
