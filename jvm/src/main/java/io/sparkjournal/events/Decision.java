package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.format.FormatVersionException;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * One entry of the commit log (commit_log.Decision): the decision of one
 * epoch of a batch, the commit point of the two-phase commit. A commit entry
 * names the transactions that make up the batch ({@link #txRefs()}); an abort
 * entry ({@link #aborted()}) commits nothing and aborts every transaction of
 * its epoch (COMMIT_LOG.md, "Entries").
 *
 * <p>{@link #fromJson} accepts exactly what Python's {@code Decision.from_json}
 * accepts: a JSON object whose "format" equals 1 (Python equality: 1, 1.0 and
 * true), whose "txs" is a list of objects with string "node" and "lane", an
 * integer "tx" and, if present, an integer "rows"; "query" is taken as Python's
 * {@code str()} of whatever it holds, "batch" and "committed_at_ms" as
 * Python's {@code int()}; "epoch", if present, a whole number of 0 or more
 * (0 when absent) and "aborted", if present, a boolean (false when absent;
 * an abort entry's "txs" is empty). A "format" that is an integer above 1 is
 * {@link FormatVersionException}; anything else that does not hold is
 * {@link CommitLogException} naming the entry and saying not to delete it.
 * Differences from Python: "batch", "committed_at_ms" and "epoch" must fit a
 * long (a CommitLogException otherwise; Python takes any integer), and a
 * format above 2^63 - 1 is reported as 2^63 - 1.
 */
public final class Decision {

    /** The commit log format this code reads and Python writes. */
    public static final int FORMAT = 1;

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
            BigInteger id = tx.get("tx").bigIntegerValue();
            if (id.signum() >= 0 && id.bitLength() <= 64) {     // else it names no journal tx
                found.add(new TxRef(tx.get("node").textValue(), tx.get("lane").textValue(),
                        id.longValue()));
            }
        }
        this.refs = Collections.unmodifiableSet(found);
    }

    /** The decision held by {@code raw}; {@code where} names the entry in errors. */
    public static Decision fromJson(byte[] raw, String where)
            throws CommitLogException, FormatVersionException {
        try {
            JsonNode data;
            try {
                data = PyJson.parse(raw);
            } catch (IOException notJson) {
                throw new IllegalArgumentException(firstLine(notJson.getMessage()));
            }
            if (!data.isObject()) {
                throw new IllegalArgumentException("not a format " + FORMAT
                        + " decision (not a JSON object)");
            }
            JsonNode found = data.get("format");
            NewerFormat.refuse(found, "commit log entry", where, FORMAT);
            if (!PyJson.equalsOne(found)) {
                throw new IllegalArgumentException("format " + PyRepr.reprOf(found)
                        + ", expected " + FORMAT);
            }
            JsonNode txs = required(data, "txs");
            List<ObjectNode> entries = new ArrayList<>();
            if (txs.isArray()) {
                for (JsonNode tx : txs) {
                    if (!isTx(tx)) {
                        entries = null;
                        break;
                    }
                    entries.add((ObjectNode) tx);
                }
            }
            if (!txs.isArray() || entries == null) {
                throw new IllegalArgumentException("txs must be a list of {node, lane, tx, ...} "
                        + "with whole row counts");
            }
            String query = PyRepr.strOf(required(data, "query"));
            long batch = PyJson.toLong(PyJson.toInt(required(data, "batch")), "batch");
            long at = PyJson.toLong(PyJson.toInt(required(data, "committed_at_ms")),
                    "committed_at_ms");
            JsonNode epoch = data.get("epoch");
            JsonNode aborted = data.get("aborted");
            if (epoch != null && (!PyJson.isInt(epoch) || epoch.bigIntegerValue().signum() < 0)
                    || aborted != null && !aborted.isBoolean()) {
                throw new IllegalArgumentException("epoch must be a whole number of 0 or more, "
                        + "aborted a boolean");
            }
            boolean abort = aborted != null && aborted.booleanValue();
            if (abort && !entries.isEmpty()) {
                throw new IllegalArgumentException("an abort entry names no transactions");
            }
            return new Decision(query, batch, at,
                    epoch == null ? 0 : PyJson.toLong(epoch.bigIntegerValue(), "epoch"), abort, entries);
        } catch (IllegalArgumentException | ArithmeticException error) {
            throw unreadable(where, error);
        }
    }

    private static CommitLogException unreadable(String where, RuntimeException error) {
        return new CommitLogException("commit log entry " + where + " is unreadable ("
                + error.getMessage() + "); it must be a decision written by sparkjournal. "
                + "Restore it from a backup; do not delete it (its batch would be presumed "
                + "aborted)", error);
    }

    private static JsonNode required(JsonNode data, String key) {
        JsonNode value = data.get(key);
        if (value == null) {
            throw new IllegalArgumentException("'" + key + "'");        // Python's KeyError
        }
        return value;
    }

    private static boolean isTx(JsonNode entry) {
        if (!entry.isObject()) {
            return false;
        }
        JsonNode rows = entry.get("rows");
        return entry.path("node").isTextual() && entry.path("lane").isTextual()
                && PyJson.isInt(entry.get("tx")) && (rows == null || PyJson.isInt(rows));
    }

    private static String firstLine(String message) {
        String text = String.valueOf(message);
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
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

    /**
     * The transactions the batch committed. An entry whose tx is not a u64
     * (negative, or 2^64 and above) names no transaction a journal can hold
     * and is left out; Python keeps it, but it can never match.
     */
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
            JsonNode rows = tx.get("rows");
            if (rows != null) {
                sum = sum.add(rows.bigIntegerValue());
            }
        }
        return sum;
    }
}
