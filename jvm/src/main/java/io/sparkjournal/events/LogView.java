package io.sparkjournal.events;

import io.sparkjournal.format.FormatVersionException;
import java.util.Collections;
import java.util.Map;
import java.util.NavigableMap;

/**
 * What a commit log has decided, as one reader sees it at one moment
 * (COMMIT_LOG.md, "The view"): a checkpoint ({@link LogCheckpoint#NONE} when
 * there is none) plus the entries after it. Immutable; built by
 * {@link LogViewReader}, taken with {@link CommitLog#view()}.
 *
 * <p>The questions asked of the log are answered here, against this view
 * only: {@link #outcome} of a prepared transaction, whether a batch is
 * {@link #done}, and a batch's {@link #committedAtMs}. Batch ids are never
 * negative: a negative one has no entry and is never folded.
 */
public final class LogView {

    private final CommitTimes times;
    private final LogCheckpoint checkpoint;
    private final long listedSeq;
    private final Map<String, NavigableMap<Long, Decision>> entries;

    /**
     * {@code entries}: per query (code point order), its entries in the view by
     * batch; never changed after. {@code listedSeq}: the highest checkpoint seq
     * listed when the view was read (-1: none), which may be a damaged one
     * passed over.
     */
    LogView(CommitTimes times, LogCheckpoint checkpoint, long listedSeq,
            Map<String, NavigableMap<Long, Decision>> entries) {
        this.times = times;
        this.checkpoint = checkpoint;
        this.listedSeq = listedSeq;
        for (Map.Entry<String, NavigableMap<Long, Decision>> query : entries.entrySet()) {
            query.setValue(Collections.unmodifiableNavigableMap(query.getValue()));
        }
        this.entries = Collections.unmodifiableMap(entries);
    }

    /** The checkpoint the view starts from. */
    public LogCheckpoint checkpoint() {
        return checkpoint;
    }

    long listedSeq() {
        return listedSeq;
    }

    /** Every entry in the view: per query (code point order), by batch ascending. */
    public Map<String, NavigableMap<Long, Decision>> entries() {
        return entries;
    }

    /** The entry of the batch if it is in the view, else null. */
    public Decision entry(String query, long batch) {
        NavigableMap<Long, Decision> found = entries.get(query);
        return found == null ? null : found.get(batch);
    }

    /** The highest decided batch of {@code query} in the view (folded or entry), or null if none. */
    public Long highestDecided(String query) {
        NavigableMap<Long, Decision> found = entries.get(query);
        if (found != null && !found.isEmpty()) {
            return found.lastKey();
        }
        LogCheckpoint.Query folded = checkpoint.query(query);
        return folded == null ? null : folded.through();
    }

    /** Whether the batch counts as done by the view: its entry is in it, or a batch at or after it is decided. */
    public boolean done(String query, long batch) {
        Long highest = highestDecided(query);
        return entry(query, batch) != null || highest != null && batch <= highest;
    }

    /**
     * The outcome of the prepared transaction {@code ref} of batch
     * {@code batch} of {@code query} (COMMIT_LOG.md, "Outcome of a prepared
     * transaction", rules 1 to 5). A query id no folder can have (".."), like
     * any query the view holds nothing of, is UNDECIDED.
     */
    public Outcome outcome(String query, long batch, TxRef ref) {
        Decision decision = entry(query, batch);
        if (decision != null) {
            return decision.commits(ref) ? Outcome.COMMITTED : Outcome.ABORTED;
        }
        if (folded(query, batch)) {
            return checkpoint.committed(ref) ? Outcome.COMMITTED : Outcome.ABORTED;
        }
        Long highest = highestDecided(query);
        return highest != null && highest > batch ? Outcome.ABORTED : Outcome.UNDECIDED;
    }

    /**
     * When the batch was committed (ms since the epoch): its entry's time, or
     * for a folded batch its {@link CommitTimes} slot; null if not decided.
     * Damage of a segment is a {@link CommitLogException} naming it.
     */
    public Long committedAtMs(String query, long batch) throws EventsException, FormatVersionException {
        Decision decision = entry(query, batch);
        if (decision != null) {
            return decision.committedAtMs();
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
