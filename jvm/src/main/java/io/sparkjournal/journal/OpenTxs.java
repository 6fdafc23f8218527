package io.sparkjournal.journal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The transactions a {@link LaneAppender} may still end, with what it needs
 * to write their PREPARE/COMMIT/ROLLBACK: how many of each one's records lie
 * in each data file (Artemis's per-file count, FORMAT.md "Count"), and
 * whether it is prepared. Begun from the lane's load (every transaction with
 * records or a PREPARE and no outcome yet), kept up to date by the appender.
 *
 * <p>The rules are FORMAT.md's ("Record", transactions): a transaction begins with its first
 * record or with its PREPARE; a prepared one takes no more records and no
 * second PREPARE; a COMMIT or ROLLBACK ends one that is open, and is refused
 * for any other. Refusals are {@link TxException}s, thrown before anything is
 * appended.
 */
final class OpenTxs {

    /** A transaction refused an operation (TransactionError on the Python side). */
    static final class TxException extends JournalException {
        private static final long serialVersionUID = 1L;

        TxException(String message) {
            super(message);
        }
    }

    private static final class Tx {
        final Map<Long, Integer> perFile = new HashMap<>();
        boolean prepared;
    }

    private final LinkedHashMap<Long, Tx> txs = new LinkedHashMap<>();

    /** The transactions without an outcome in {@code state}, in the order they began. */
    static OpenTxs from(ReplayState state) {
        OpenTxs open = new OpenTxs();
        for (ReplayState.Tx loaded : state.txs.values()) {
            Tx tx = new Tx();
            tx.prepared = loaded.prepared;
            tx.perFile.putAll(loaded.perFile);
            open.txs.put(loaded.txId, tx);
        }
        return open;
    }

    /** Ids of the transactions begun and not prepared (a dead writer's, at open), in order. */
    List<Long> unprepared() {
        List<Long> ids = new ArrayList<>();
        txs.forEach((txId, tx) -> {
            if (!tx.prepared) {
                ids.add(txId);
            }
        });
        return ids;
    }

    /** Throws unless {@code txId} may take a record now. */
    void checkRecord(long txId) throws TxException {
        Tx tx = txs.get(txId);
        if (tx != null && tx.prepared) {
            throw new TxException("transaction " + Long.toUnsignedString(txId)
                    + " is prepared: it takes no more records");
        }
    }

    /** Throws unless {@code txId} may be prepared now. */
    void checkPrepare(long txId) throws TxException {
        Tx tx = txs.get(txId);
        if (tx != null && tx.prepared) {
            throw new TxException("transaction " + Long.toUnsignedString(txId)
                    + " is already prepared");
        }
    }

    /** Throws unless {@code txId} is open (it may be committed or rolled back now). */
    void checkEnd(long txId) throws TxException {
        if (!txs.containsKey(txId)) {
            throw new TxException("transaction " + Long.toUnsignedString(txId)
                    + " is not open in this journal");
        }
    }

    /** The transaction's records in file {@code fileId}: the count its PREPARE, COMMIT or
     *  ROLLBACK carries there. */
    int countIn(long txId, long fileId) {
        Tx tx = txs.get(txId);
        return tx == null ? 0 : tx.perFile.getOrDefault(fileId, 0);
    }

    /** A record of {@code txId} was appended into file {@code fileId}. */
    void recordAppended(long txId, long fileId) {
        txs.computeIfAbsent(txId, id -> new Tx()).perFile.merge(fileId, 1, Integer::sum);
    }

    /** {@code txId}'s PREPARE was appended. */
    void prepared(long txId) {
        txs.computeIfAbsent(txId, id -> new Tx()).prepared = true;
    }

    /** {@code txId}'s COMMIT or ROLLBACK was appended: it is over. */
    void ended(long txId) {
        txs.remove(txId);
    }
}
