package io.sparkjournal.events;

import io.sparkjournal.journal.LaneAppender;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

/**
 * What a writer does for the lane it has just opened: every transaction the
 * lane holds prepared is ended as the commit log decided it (COMMIT_LOG.md,
 * "Outcome of a prepared transaction"), by the rule of
 * {@link Resolver#outcome}:
 *
 * COMMIT if COMMITTED, ROLLBACK if ABORTED, by the view of its XID's own
 * commit log (which may be another log than the task's), each log viewed once
 * per call ({@link Resolution}); left prepared otherwise (undecided: the
 * driver may still decide it; foreign: its owner's).
 *
 * An XID naming a commit log this JVM cannot read (a URI other than file://,
 * such as the hdfs://, s3:// and gs:// logs a Python writer reaches) is left
 * prepared with a warning, for a Python writer or reader to resolve; an error
 * reading a log it can read fails the open.
 *
 * <p>The records are appended unsynced: the task's synced
 * PREPARE, or the appender's close, makes them durable. Crash behaviour: they
 * only restate the commit log, so losing them changes nothing; the next
 * writer of the lane writes them again.
 *
 * <p>The prepared transactions are the appender's ({@link LaneAppender#prepared}:
 * those its open found and those prepared since, by earlier tasks that used
 * the same writer); the caller holds the lane's writer lock, so nothing else
 * ends or prepares one in between.
 */
public final class PreparedEnding {

    private static final Logger LOG = Logger.getLogger("sparkjournal.resolve");

    /** Tx ids committed, rolled back and left prepared (in the lane's order). */
    public record Result(List<Long> committed, List<Long> rolledBack, List<Long> pending) {
    }

    private PreparedEnding() {
    }

    /** Ends the decided ones of {@code appender}'s prepared transactions ({@code node},
     *  {@code lane} name its lane in decisions); see the class. */
    public static Result end(LaneAppender appender, String node, String lane, Resolver resolver)
            throws IOException {
        List<Long> committed = new ArrayList<>();
        List<Long> rolledBack = new ArrayList<>();
        List<Long> pending = new ArrayList<>();
        Resolution outcomes = resolver.pass();
        for (Map.Entry<Long, byte[]> tx : appender.prepared().entrySet()) {
            long txId = tx.getKey();
            byte[] xid = tx.getValue();
            BatchXid batch = BatchXid.decode(xid);
            if (batch != null && !readable(batch.log())) {
                LOG.warning("lane " + lane + " of node " + node + ": prepared tx "
                        + Long.toUnsignedString(txId) + " names the commit log "
                        + batch.log() + ", which the JVM writer cannot read; left prepared for "
                        + "a Python writer or reader to resolve");
                pending.add(txId);
                continue;
            }
            Outcome fate = outcomes.outcome(xid, new TxRef(node, lane, txId));
            if (fate == Outcome.COMMITTED) {
                appender.commit(txId, false);
                committed.add(txId);
            } else if (fate == Outcome.ABORTED) {
                appender.rollback(txId, false);
                rolledBack.add(txId);
            } else {
                pending.add(txId);
            }
        }
        if (!committed.isEmpty() || !rolledBack.isEmpty()) {
            LOG.info("lane " + lane + " of node " + node + ": committed tx " + committed
                    + ", rolled back tx " + rolledBack + " as the commit log decided");
        }
        return new Result(committed, rolledBack, pending);
    }

    /** Whether {@link CommitLog} reads a log at {@code uri}: a local path or a file:// URI. */
    static boolean readable(String uri) {
        if (!uri.contains("://")) {
            return true;
        }
        try {
            URI parsed = new URI(uri);
            return "file".equals(parsed.getScheme()) && parsed.getRawAuthority() == null;
        } catch (URISyntaxException bad) {
            return true;                    // CommitLog says what is wrong with it
        }
    }
}
