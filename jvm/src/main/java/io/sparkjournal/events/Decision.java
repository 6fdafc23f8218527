package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.format.Constants;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.StrictJson;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One entry of the commit log: the decision of one epoch of a batch, the
 * commit point of the two-phase commit. A commit entry names the transactions
 * that make up the batch ({@link #txRefs()}); an abort entry
 * ({@link #aborted()}) commits nothing and aborts every transaction of its
 * epoch (COMMIT_LOG.md, "Entries").
 *
 * <p>{@link #fromJson} reads an entry strictly (JSON.md): "format" first (an
 * integer above 1 is {@link FormatVersionException}, nothing else read; any
 * other value but 1 is damage), then "query" a string, "batch" and
 * "committed_at_ms" integers, "epoch" (absent: 0) an integer, "aborted"
 * (absent: false) a boolean, "txs" a list of objects with string "node" and
 * "lane", a u64 "tx" and, where present, string "host" and "root" and integer
 * "rows", "bytes" and "records"; an abort entry's "txs" is empty. Integers
 * other than "tx" are held in longs: one above 2^63 - 1 (no writer writes one)
 * is refused. Anything refused is a {@link CommitLogException} naming the
 * entry and saying not to delete it (COMMIT_LOG.md, "Reader requirement"
 * treats an entry as written atomically: refused bytes are damage).
 */
public final class Decision {

    /** The commit log format this code reads and writes. */
    public static final int FORMAT = 1;

    private static final String[] COUNTS = {Constants.EntryTx.ROWS, Constants.EntryTx.BYTES, Constants.EntryTx.RECORDS};

    private final String query;
    private final long batch;
    private final long committedAtMs;
    private final long epoch;
    private final boolean aborted;
    private final List<ObjectNode> txs;
    private final Set<TxRef> refs;

    private Decision(String query, long batch, long committedAtMs, long epoch, boolean aborted,
                     List<ObjectNode> txs) {
        this.query = query;
        this.batch = batch;
        this.committedAtMs = committedAtMs;
        this.epoch = epoch;
        this.aborted = aborted;
        this.txs = Collections.unmodifiableList(txs);
        Set<TxRef> found = new LinkedHashSet<>();
        for (ObjectNode tx : txs) {
            found.add(new TxRef(tx.get(Constants.EntryTx.NODE).textValue(), tx.get(Constants.EntryTx.LANE).textValue(),
                    tx.get(Constants.EntryTx.TX).bigIntegerValue().longValue()));
        }
        this.refs = Collections.unmodifiableSet(found);
    }

    /** The decision held by {@code raw}; {@code where} names the entry in errors. */
    public static Decision fromJson(byte[] raw, String where)
            throws CommitLogException, FormatVersionException {
        try {
            JsonNode data = StrictJson.parse(raw);
            StrictJson.format(data, FORMAT, "commit log entry", where);
            String query = StrictJson.string(data, Constants.CommitEntry.QUERY);
            long batch = StrictJson.whole(data, Constants.CommitEntry.BATCH);
            long at = StrictJson.whole(data, Constants.CommitEntry.COMMITTED_AT_MS);
            long epoch = StrictJson.whole(data, Constants.CommitEntry.EPOCH, 0);
            boolean abort = StrictJson.bool(data, Constants.CommitEntry.ABORTED, false);
            List<ObjectNode> entries = new ArrayList<>();
            for (JsonNode tx : StrictJson.array(data, Constants.CommitEntry.TXS)) {
                entries.add(tx(tx));
            }
            if (abort && !entries.isEmpty()) {
                throw new IllegalArgumentException("an abort entry names no transactions");
            }
            return new Decision(query, batch, at, epoch, abort, entries);
        } catch (IllegalArgumentException error) {
            throw new CommitLogException("commit log entry " + where + " is unreadable ("
                    + error.getMessage() + "); it must be a decision written by sparkjournal. "
                    + "Restore it from a backup; do not delete it (its batch would be presumed "
                    + "aborted)", error);
        }
    }

    /** One item of "txs", its fields checked (see the class). */
    private static ObjectNode tx(JsonNode tx) {
        StrictJson.requireObject(tx, "an item of \"" + Constants.CommitEntry.TXS + "\"");
        StrictJson.string(tx, Constants.EntryTx.NODE);
        StrictJson.string(tx, Constants.EntryTx.LANE);
        StrictJson.u64(tx, Constants.EntryTx.TX);
        StrictJson.string(tx, Constants.EntryTx.HOST, "");
        StrictJson.string(tx, Constants.EntryTx.ROOT, "");
        for (String count : COUNTS) {
            StrictJson.whole(tx, count, 0);
        }
        return (ObjectNode) tx;
    }

    /** The tx's "host": the part of its node after the last "@" where absent (COMMIT_LOG.md, "Checkpoints"). */
    static String host(ObjectNode tx) {
        String node = tx.get(Constants.EntryTx.NODE).textValue();
        return StrictJson.string(tx, Constants.EntryTx.HOST, node.substring(node.lastIndexOf('@') + 1));
    }

    /** The tx's "root": "" where absent. */
    static String root(ObjectNode tx) {
        return StrictJson.string(tx, Constants.EntryTx.ROOT, "");
    }

    /** The tx's count {@code name} ("rows", "bytes", "records"): 0 where absent. */
    static long count(ObjectNode tx, String name) {
        return StrictJson.whole(tx, name, 0);
    }

    public String query() {
        return query;
    }

    public long batch() {
        return batch;
    }

    /** The time of the decision (a commit entry's: when its batch committed). */
    public long committedAtMs() {
        return committedAtMs;
    }

    /** The epoch of the batch this entry decides (0 for an entry without "epoch"). */
    public long epoch() {
        return epoch;
    }

    /** Whether this is an abort entry: every transaction of its epoch is aborted. */
    public boolean aborted() {
        return aborted;
    }

    /**
     * Every tx entry as written: node, lane, tx and whatever else it carries
     * (host, root, records, rows, bytes).
     */
    public List<ObjectNode> txs() {
        return txs;
    }

    /** The transactions the batch names (tx ids u64s in longs). */
    public Set<TxRef> txRefs() {
        return refs;
    }

    /** Whether this entry commits {@code ref}: a commit entry naming it (an abort entry commits none). */
    public boolean commits(TxRef ref) {
        return !aborted && refs.contains(ref);
    }

    /** The rows the batch committed: the sum of the entries' "rows" (0 where absent). */
    public BigInteger rows() {
        BigInteger sum = BigInteger.ZERO;
        for (ObjectNode tx : txs) {
            JsonNode rows = tx.get(Constants.EntryTx.ROWS);
            if (rows != null) {
                sum = sum.add(rows.bigIntegerValue());
            }
        }
        return sum;
    }
}
