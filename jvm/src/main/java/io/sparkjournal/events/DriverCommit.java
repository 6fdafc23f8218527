package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import io.sparkjournal.format.FormatVersionException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Phase two of the two-phase commit on the driver, in the JVM: the decision
 * on the tasks' messages (COMMIT_LOG.md, "Entries"), nothing more.
 *
 * <p>Contract of {@link #commit}: given the messages of the winning task
 * attempts (each a task's commit message, {@link TaskWrite}), it takes the
 * batch's write epoch (COMMIT_LOG.md, "Entries", writer requirements: every
 * task's epoch, which must be one and the same, else an operator's abort
 * landed while they ran and the batch fails saying so; no message:
 * {@link LogView#writeEpoch} of a fresh view) and records the decision naming
 * exactly their transactions ({@link #DECIDED}'s fields of each message) with
 * {@link CommitLogWriter#record}: the commit point. The caller asks
 * {@link #done} first and skips a batch that is done.
 *
 * <p>Not done here, by design: COMMIT records into the lanes after the
 * decision (a lane's prepared transactions are resolved from the commit log
 * by its readers and by its next writer, {@link PreparedEnding}), and
 * commit-log checkpoints and retention (the caller's, after the decision:
 * {@link LogCheckpointer}).
 *
 * <p>Crash behaviour: killed before the entry is linked into place, nothing
 * of the batch is visible (its prepared transactions stay undecided until a
 * replay's decision leaves them out; Spark replays the batch); after, the
 * batch is committed and a replay finds it done.
 */
public final class DriverCommit {

    /** The fields of a task message a decision records (COMMIT_LOG.md, "Entries": each tx). */
    static final List<String> DECIDED = List.of(Constants.EntryTx.NODE, Constants.EntryTx.HOST, Constants.EntryTx.ROOT, Constants.EntryTx.LANE, Constants.EntryTx.TX,
            Constants.EntryTx.RECORDS, Constants.EntryTx.ROWS, Constants.EntryTx.BYTES);

    private DriverCommit() {
    }

    /** Whether the batch is done (COMMIT_LOG.md): a replay of it is skipped. */
    public static boolean done(CommitLog log, String query, long batch)
            throws EventsException, FormatVersionException {
        return log.view().done(query, batch) || log.hasEntry(query, batch);
    }

    /** Records the decision of {@code messages} (see the class). */
    public static Decision commit(CommitLog log, String query, long batch,
                                  List<Map<String, Object>> messages)
            throws EventsException, FormatVersionException {
        long epoch = writeEpoch(log, query, batch, messages);
        List<Map<String, Object>> txs = new ArrayList<>();
        for (Map<String, Object> message : messages) {
            if (message.get(Constants.EntryTx.TX) == null) {
                continue;                            // nothing written (DROP): metrics only
            }
            Map<String, Object> tx = new java.util.LinkedHashMap<>();
            for (String field : DECIDED) {
                tx.put(field, message.get(field));
            }
            txs.add(tx);
        }
        return new CommitLogWriter(log).record(query, batch, txs, epoch, false);
    }

    /** The batch's write epoch from its tasks' messages (see the class). */
    static long writeEpoch(CommitLog log, String query, long batch, List<Map<String, Object>> messages)
            throws EventsException, FormatVersionException {
        TreeSet<Long> epochs = new TreeSet<>();
        for (Map<String, Object> message : messages) {
            epochs.add(((Number) message.getOrDefault("epoch", 0L)).longValue());
        }
        if (epochs.size() > 1) {
            throw new CommitLogWriter.BatchTakenException("batch " + batch + " of query " + query
                    + " was aborted by an operator (sparkjournal abort) while its tasks ran (they "
                    + "wrote at epochs " + epochs + "): this run's data of the batch stays "
                    + "invisible. Restart the query: Spark replays the batch and the sink writes "
                    + "it again");
        }
        return epochs.isEmpty() ? log.view().writeEpoch(query, batch) : epochs.first();
    }
}
