package io.sparkjournal.events;

import io.sparkjournal.format.FormatVersionException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.NavigableMap;

/**
 * What a commit log has decided, as one reader sees it at one moment
 * (COMMIT_LOG.md, "The view"): a checkpoint ({@link LogCheckpoint#NONE} when
 * there is none) plus the latest entry of each batch after it. Immutable;
 * built by {@link LogViewReader}, taken with {@link CommitLog#view()}.
 *
 * <p>The questions asked of the log are answered here, against this view
 * only: {@link #outcome} of a prepared transaction, whether a batch is
 * {@link #done}, its {@link #writeEpoch}, a query's {@link #lastCommitted}
 * batch and a batch's {@link #committedAtMs}; and which nodes are
 * {@link #forgotten}, as their records were read with the view. Batch ids are never negative:
 * a negative one has no entry and is never folded.
 */
public final class LogView {

    private final CommitTimes times;
    private final LogCheckpoint checkpoint;
    private final long listedSeq;
    private final Map<String, NavigableMap<Long, Decision>> entries;
    private final Map<String, Long> lastCommitEntry = new HashMap<>();
    private final Map<String, ForgottenNode> forgotten;

    /**
     * {@code entries}: per query (code point order), the latest entry of each
     * batch in the view, by batch; never changed after. {@code listedSeq}:
     * the highest checkpoint seq listed when the view was read (-1: none),
     * which may be a damaged one passed over. {@code forgotten}: the
     * forgotten nodes' records read with it, by node id.
     */
    LogView(CommitTimes times, LogCheckpoint checkpoint, long listedSeq,
            Map<String, NavigableMap<Long, Decision>> entries, Map<String, ForgottenNode> forgotten) {
        this.times = times;
        this.forgotten = Collections.unmodifiableMap(forgotten);
        this.checkpoint = checkpoint;
        this.listedSeq = listedSeq;
        for (Map.Entry<String, NavigableMap<Long, Decision>> query : entries.entrySet()) {
            query.setValue(Collections.unmodifiableNavigableMap(query.getValue()));
            for (Map.Entry<Long, Decision> latest : query.getValue().descendingMap().entrySet()) {
                if (!latest.getValue().aborted()) {
                    lastCommitEntry.put(query.getKey(), latest.getKey());
                    break;
                }
            }
        }
        this.entries = Collections.unmodifiableMap(entries);
    }

    /** The checkpoint the view starts from. */
    public LogCheckpoint checkpoint() {
        return checkpoint;
    }

    /** The forgotten nodes as this view was read: node id -> record (code point order). */
    public Map<String, ForgottenNode> forgotten() {
        return forgotten;
    }

    long listedSeq() {
        return listedSeq;
    }

    /** The latest entry of each batch in the view: per query (code point order), by batch ascending. */
    public Map<String, NavigableMap<Long, Decision>> entries() {
        return entries;
    }

    /** The latest entry of the batch (a commit or an abort entry) if it is in the view, else null. */
    public Decision entry(String query, long batch) {
        NavigableMap<Long, Decision> found = entries.get(query);
        return found == null ? null : found.get(batch);
    }

    /**
     * The last committed batch of {@code query}: the highest batch whose latest
     * entry in the view is a commit entry, else the checkpoint's
     * {@code through} of it; -1 if neither.
     */
    public long lastCommitted(String query) {
        Long found = lastCommitEntry.get(query);
        if (found != null) {
            return found;
        }
        LogCheckpoint.Query folded = checkpoint.query(query);
        return folded == null ? -1 : folded.through();
    }

    /**
     * Whether the batch is done (a replay of it writes nothing): its latest
     * entry is a commit entry, or it is at or below the last committed batch.
     * A batch whose latest entry is an abort entry is not done.
     */
    public boolean done(String query, long batch) {
        Decision latest = entry(query, batch);
        return latest != null && !latest.aborted() || batch <= lastCommitted(query);
    }

    /**
     * The epoch a task writes the batch at: one more than its latest entry's
     * if that is an abort entry, else 0.
     */
    public long writeEpoch(String query, long batch) {
        Decision latest = entry(query, batch);
        return latest != null && latest.aborted() ? latest.epoch() + 1 : 0;
    }

    /**
     * The outcome of the prepared transaction {@code ref} of batch
     * {@code batch} of {@code query}, written at epoch {@code epoch} (its
     * XID's; COMMIT_LOG.md, "Outcome of a prepared transaction", rules 1 to
     * 5). A query id no folder can have (".."), like any query the view holds
     * nothing of, is UNDECIDED.
     */
    public Outcome outcome(String query, long batch, TxRef ref, long epoch) {
        Decision latest = entry(query, batch);
        if (latest != null && latest.epoch() == epoch) {
            return latest.commits(ref) ? Outcome.COMMITTED : Outcome.ABORTED;
        }
        if (latest != null && latest.epoch() > epoch) {
            return Outcome.ABORTED;
        }
        if (folded(query, batch)) {
            return checkpoint.committed(ref) ? Outcome.COMMITTED : Outcome.ABORTED;
        }
        Long later = lastCommitEntry.get(query);     // batch is above through: no folded batch is later
        return later != null && later > batch ? Outcome.ABORTED : Outcome.UNDECIDED;
    }

    /**
     * When the batch was committed (ms since the epoch): its latest entry's
     * time if that is a commit entry, or for a folded batch its
     * {@link CommitTimes} slot; null if not committed (an abort entry commits
     * no event of it).
     * Damage of a segment is a {@link CommitLogException} naming it.
     */
    public Long committedAtMs(String query, long batch) throws EventsException, FormatVersionException {
        Decision decision = entry(query, batch);
        if (decision != null) {
            return decision.aborted() ? null : decision.committedAtMs();
        }
        return folded(query, batch) ? times.committedAtMs(query, batch) : null;
    }

    private boolean folded(String query, long batch) {
        LogCheckpoint.Query known = checkpoint.query(query);
        return known != null && batch >= 0 && batch <= known.through();
    }

    @Override
    public String toString() {
        int count = 0;
        for (NavigableMap<Long, Decision> each : entries.values()) {
            count += each.size();
        }
        return "view of " + checkpoint + " and " + count + " entries after it";
    }
}
