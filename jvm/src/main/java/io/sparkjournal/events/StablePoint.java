package io.sparkjournal.events;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.logging.Logger;

import io.sparkjournal.journal.LaneSnapshot;
import io.sparkjournal.journal.PreparedTx;
import io.sparkjournal.journal.WriterProbe;

/**
 * A lane's stable point, as a stream reads lanes (EVENTS.md, "Visibility:
 * what a read returns"): the first record id at or above which a record may
 * still change visibility. Every record below it is final (committed, or
 * aborted for good), so a stream whose offsets never pass it reads each
 * event exactly once, and the same range read again yields the same rows
 * (Kafka's last stable offset).
 *
 * <p>It is the lane's next record id, held lower by the first record of
 * <ul>
 *   <li>each open transaction (no PREPARE, COMMIT or ROLLBACK yet) while the
 *       lane has a live writer ({@link WriterProbe}); once the writer is gone
 *       its open transactions are dead (its next writer rolls them back) and
 *       hold nothing;</li>
 *   <li>each prepared transaction the commit log has not decided
 *       ({@link Outcome#UNDECIDED}); for a root without NODE_ID no prepared
 *       transaction can be resolved (EVENTS.md), and none holds.</li>
 * </ul>
 */
public final class StablePoint {

    private static final Logger LOG = Logger.getLogger("sparkjournal.stream");

    private StablePoint() {
    }

    /**
     * A lane's stable point and what holds it: {@code point}, the stable
     * point; {@code beforeUndecided}, the point open transactions alone give
     * (at or above {@code point}: the records in between are held back by
     * undecided transactions only); {@code oldestPreparedAtMs}, the PREPARE
     * time (its XID's {@code prepared_at_ms}) of the oldest undecided
     * transaction holding the point, 0 if none holds it or none says when.
     */
    public record Hold(long point, long beforeUndecided, long oldestPreparedAtMs) {
    }

    /** The stable point of {@code snapshot}, the lane {@code lane} of node {@code node} (null: no NODE_ID). */
    public static long of(LaneSnapshot snapshot, Path lane, String node) throws IOException {
        return hold(snapshot, lane, node).point();
    }

    /** The stable point of the lane and what holds it ({@link Hold}); see {@link #of}. */
    public static Hold hold(LaneSnapshot snapshot, Path lane, String node) throws IOException {
        long point = snapshot.maxRecordId() + 1;
        var open = snapshot.openTransactions();
        if (!open.isEmpty() && WriterProbe.writerAlive(lane)) {
            for (List<Long> ids : open.values()) {
                if (!ids.isEmpty()) {
                    point = Math.min(point, Collections.min(ids));
                }
            }
        }
        long beforeUndecided = point;
        long oldest = 0;
        if (node != null) {
            String laneName = lane.getFileName().toString();
            Resolution outcomes = Resolver.shared().pass();
            for (PreparedTx tx : snapshot.prepared()) {
                if (tx.recordIds().isEmpty()) {
                    continue;
                }
                if (outcomes.outcome(tx.xid(), new TxRef(node, laneName, tx.txId())) == Outcome.UNDECIDED) {
                    long first = Collections.min(tx.recordIds());
                    point = Math.min(point, first);
                    long preparedAtMs = BatchXid.decode(tx.xid()).preparedAtMs();   // UNDECIDED: it is ours
                    if (preparedAtMs > 0 && (oldest == 0 || preparedAtMs < oldest)) {
                        oldest = preparedAtMs;
                    }
                    LOG.info("lane " + lane + ": undecided transaction " + tx.txId() + " (its batch has no "
                            + "decision yet) holds the stream at record " + first);
                }
            }
        }
        return new Hold(point, beforeUndecided, oldest);
    }
}
