package io.sparkjournal.events;

import java.io.IOException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Phase two of the two-phase commit as a reader sees it: a prepared
 * transaction's XID ({@link BatchXid}) names its batch, epoch and commit log,
 * and its outcome is that log's view's (COMMIT_LOG.md, "Outcome of a prepared
 * transaction"; {@link LogView#outcome}): COMMITTED, ABORTED, UNDECIDED
 * (invisible: presumed aborted), or FOREIGN if the XID is not this sink's.
 *
 * <p>One {@link CommitLog} per URI, kept for the process ({@link #shared()}),
 * so each log's last view is reused. Thread-safe.
 */
public final class Resolver {

    private static final Resolver SHARED = new Resolver();

    private final ConcurrentHashMap<String, CommitLog> logs = new ConcurrentHashMap<>();

    /** The process-wide resolver. */
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

    /** A pass of outcomes that views each commit log once ({@link Resolution}). */
    public Resolution pass() {
        return new Resolution(this);
    }

    /**
     * The outcome of the transaction {@code ref} whose PREPARE carries
     * {@code xid}, against a fresh view of its log. Errors of the commit log
     * ({@link CommitLogException},
     * {@link io.sparkjournal.format.FormatVersionException}) are thrown, never
     * read as an outcome. Resolving many at once, use a
     * {@link #pass()}.
     */
    public Outcome outcome(byte[] xid, TxRef ref) throws IOException {
        return pass().outcome(xid, ref);
    }
}
