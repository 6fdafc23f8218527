package io.sparkjournal.events;

import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.PythonRepr;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * Reads a commit log's {@link LogView} as COMMIT_LOG.md ("The view") says:
 *
 * <ol>
 *   <li>list {@code _checkpoints/} and take the newest readable checkpoint
 *       ({@link Checkpoints});</li>
 *   <li>for each query it knows, read the entries {@code through + 1,
 *       through + 2, ...} until one is absent (a {@code batch-write-*} query
 *       whose batch 0 is folded is not probed);</li>
 *   <li>for each query folder it does not know (not named from "_"), read
 *       every entry in it;</li>
 *   <li>list {@code _checkpoints/} again: if its highest seq changed,
 *       retention may have removed entries being read, so start over from
 *       the new one.</li>
 * </ol>
 *
 * The last view read is kept: while the highest listed seq is unchanged the
 * next read reuses its checkpoint and entries (entries are never changed)
 * and only reads entries that appeared since. Thread-safe without locks:
 * views are immutable and the newest one read is published.
 *
 * <p>Errors of any file read are thrown ({@link CommitLogException},
 * {@link FormatVersionException}); none is read as an absent entry. An entry
 * listed and gone before its read is left out (the listing after catches
 * the checkpoint that allowed its removal). After {@value #ROUNDS} rounds in
 * which the checkpoints kept changing, a CommitLogException.
 */
final class LogViewReader {

    static final int ROUNDS = 16;
    private static final String BATCH_WRITE = "batch-write-";

    private final CommitLog log;
    private volatile LogView last;

    LogViewReader(CommitLog log) {
        this.log = log;
    }

    /** The view now; see the class. */
    LogView view() throws EventsException, FormatVersionException {
        LogView previous = last;
        for (int round = 0; round < ROUNDS; round++) {
            long[] listed = Checkpoints.list(log);
            long top = listed.length == 0 ? -1 : listed[0];
            LogView from = previous != null && previous.listedSeq() == top ? previous : null;
            LogCheckpoint checkpoint = from != null ? from.checkpoint() : Checkpoints.newestReadable(log, listed);
            Map<String, NavigableMap<Long, Decision>> entries = new TreeMap<>(PythonRepr::compareCodePoints);
            probeKnown(checkpoint, from, entries);
            listUnknown(checkpoint, from, entries);
            if (Checkpoints.top(log) == top) {
                LogView view = new LogView(log.times(), checkpoint, top, entries);
                last = view;
                return view;
            }
            previous = null;
        }
        throw new CommitLogException("commit log " + log.uri() + ": a newer checkpoint appeared during each of "
                + ROUNDS + " reads of its view, so no view could be read whole; retry, and if it persists "
                + "raise commitLogCheckpointInterval of the writers of this log");
    }

    private void probeKnown(LogCheckpoint checkpoint, LogView from, Map<String, NavigableMap<Long, Decision>> into)
            throws EventsException, FormatVersionException {
        for (LogCheckpoint.Query query : checkpoint.queries().values()) {
            if (query.query().startsWith(BATCH_WRITE)) {
                continue;                       // its one batch, 0, is folded (through is never below 0)
            }
            TreeMap<Long, Decision> found = reused(from, query.query());
            long next = found.isEmpty() ? query.through() : found.lastKey();
            while (next != Long.MAX_VALUE) {
                Decision entry = log.entry(query.query(), ++next);
                if (entry == null) {
                    break;
                }
                found.put(next, entry);
            }
            if (!found.isEmpty()) {
                into.put(query.query(), found);
            }
        }
    }

    private void listUnknown(LogCheckpoint checkpoint, LogView from, Map<String, NavigableMap<Long, Decision>> into)
            throws EventsException, FormatVersionException {
        for (String query : log.queries()) {
            if (checkpoint.query(query) != null) {
                continue;
            }
            TreeMap<Long, Decision> found = reused(from, query);
            for (long batch : log.entryBatches(query)) {
                if (!found.containsKey(batch)) {
                    Decision entry = log.entry(query, batch);
                    if (entry != null) {
                        found.put(batch, entry);
                    }
                }
            }
            if (!found.isEmpty()) {
                into.put(query, found);
            }
        }
    }

    private static TreeMap<Long, Decision> reused(LogView from, String query) {
        NavigableMap<Long, Decision> before = from == null ? null : from.entries().get(query);
        return before == null ? new TreeMap<>() : new TreeMap<>(before);
    }
}
