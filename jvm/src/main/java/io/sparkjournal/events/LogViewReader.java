package io.sparkjournal.events;

import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.CodePoints;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Reads a commit log's {@link LogView} as COMMIT_LOG.md ("The view") says:
 *
 * <ol>
 *   <li>list {@code _checkpoints/} and take the newest readable checkpoint
 *       ({@link Checkpoints});</li>
 *   <li>list each query folder (every folder but the log's own,
 *       {@link CommitLog#OWN_FOLDERS}, and the folder of each query the checkpoint knows)
 *       and read the latest entry (the highest epoch listed) of every batch
 *       above the checkpoint's {@code through} of that query: of every batch
 *       for a query it does not know. Batch ids may have gaps: an entry past
 *       one is in the view. A {@code batch-write-*} query whose batch 0 is folded is
 *       not listed;</li>
 *   <li>list {@code _checkpoints/} again: if its highest seq changed,
 *       retention may have removed entries being read, so start over from
 *       the new one;</li>
 *   <li>read every forgotten node's record ({@link ForgottenNode#readAll}),
 *       at every build: a forget or restore takes effect at the next view.</li>
 * </ol>
 *
 * Entries are the files named {@code <batch, 20 ASCII digits>.json} (epoch 0)
 * and {@code <batch, 20 ASCII digits>.<epoch>.json} ({@link CommitLog#latestEpochs});
 * no other name is read. The last view read is kept: while the highest listed
 * seq is unchanged the next read reuses its checkpoint and the entries it
 * read (entries are never changed) where the latest epoch listed is the one
 * read, and reads only the entries listed since.
 * Thread-safe without locks: views are immutable and the newest one read is
 * published.
 *
 * <p>Errors of any file read or folder listing are thrown
 * ({@link CommitLogException}, {@link FormatVersionException}); none is read
 * as an absent entry, and a damaged forgotten node record fails the view
 * naming it. An entry listed and gone before its read is left out
 * (the listing after catches the checkpoint that allowed its removal). After
 * {@value #ROUNDS} rounds in which the checkpoints kept changing, a
 * CommitLogException.
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
            Map<String, NavigableMap<Long, Decision>> entries = entriesAfter(checkpoint, from);
            if (Checkpoints.top(log) == top) {
                LogView view = new LogView(log.times(), checkpoint, top, entries, ForgottenNode.readAll(log));
                last = view;
                return view;
            }
            previous = null;
        }
        throw new CommitLogException("commit log " + log.uri() + ": a newer checkpoint appeared during each of "
                + ROUNDS + " reads of its view, so no view could be read whole; retry, and if it persists "
                + "raise commitLogCheckpointInterval of the writers of this log");
    }

    /**
     * Per query (code point order), the latest entry of each batch listed in
     * its folder above the checkpoint's {@code through} of it; queries without
     * any are left out. Entries {@code from} holds (a view of the same
     * checkpoint) of the same epoch are taken from it, not read again.
     */
    private Map<String, NavigableMap<Long, Decision>> entriesAfter(LogCheckpoint checkpoint, LogView from)
            throws EventsException, FormatVersionException {
        Set<String> queries = new TreeSet<>(CodePoints::compare);
        queries.addAll(log.queries());
        queries.addAll(checkpoint.queries().keySet());
        Map<String, NavigableMap<Long, Decision>> into = new TreeMap<>(CodePoints::compare);
        for (String query : queries) {
            LogCheckpoint.Query known = checkpoint.query(query);
            long through = known == null ? -1 : known.through();
            if (known != null && query.startsWith(BATCH_WRITE)) {
                continue;                       // its one batch, 0, is folded (through is never below 0)
            }
            NavigableMap<Long, Decision> before = from == null ? null : from.entries().get(query);
            TreeMap<Long, Decision> found = new TreeMap<>();
            for (Map.Entry<Long, Long> listed : log.latestEpochs(query).entrySet()) {
                long batch = listed.getKey();
                long epoch = listed.getValue();
                if (batch <= through) {
                    continue;
                }
                Decision entry = before == null ? null : before.get(batch);
                entry = entry != null && entry.epoch() == epoch ? entry : log.entry(query, batch, epoch);
                if (entry != null) {
                    found.put(batch, entry);
                }
            }
            if (!found.isEmpty()) {
                into.put(query, found);
            }
        }
        return into;
    }
}
