package io.sparkjournal.events;

import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.math.BigInteger;

/**
 * The XID a sparkjournal task's PREPARE carries (events/xid.py): which batch of
 * which query the transaction belongs to, and the commit log (its URI) where
 * that batch's decision is written. JSON with "kind": "sparkjournal-2pc";
 * never anything else is read from it.
 *
 * <p>{@link #decode} returns null, as Python's {@code BatchXid.decode} returns
 * None, for an XID this sink did not write: not JSON (or not UTF-8), not an
 * object, another "kind", a missing "log", "query" or "batch", or a value
 * Python's {@code int()} refuses. "epoch" is the write epoch the task wrote
 * at (COMMIT_LOG.md, "XIDs"), 0 when absent; "prepared_at_ms" when the task
 * prepared (ms since the Unix epoch; 0 when absent: not known), informational.
 * Where Python lets an error escape (a float
 * infinity as a number: OverflowError; nesting past the recursion limit) this
 * throws {@link EventsException}. "log" and "query" are Python's {@code str()}
 * of their values. Differences from Python: a batch outside the long range is
 * an EventsException; "partition", "attempt", "task", "epoch" and
 * "prepared_at_ms" are clamped to the long range (no writer reaches its ends).
 */
public record BatchXid(String log, String query, long batch, long partition, long attempt,
                       long task, long epoch, long preparedAtMs) {

    /** The XID of epoch 0 without a PREPARE time (as written before either existed). */
    public BatchXid(String log, String query, long batch, long partition, long attempt, long task) {
        this(log, query, batch, partition, attempt, task, 0, 0);
    }

    /** The "kind" of every XID this sink writes. */
    public static final String MAGIC = "sparkjournal-2pc";

    /** The XID's fields, or null when the XID was not written by this sink. */
    public static BatchXid decode(byte[] raw) throws EventsException {
        JsonNode data;
        try {
            data = PyJson.parse(raw);
        } catch (StreamConstraintsException tooDeep) {
            throw new EventsException("a PREPARE's XID cannot be read: "
                    + tooDeep.getOriginalMessage(), tooDeep);
        } catch (IOException notJson) {
            return null;
        }
        if (!data.isObject() || !data.path("kind").isTextual()
                || !MAGIC.equals(data.get("kind").textValue())) {
            return null;
        }
        try {
            if (data.get("log") == null || data.get("query") == null || data.get("batch") == null) {
                return null;
            }
            String log = PyRepr.strOf(data.get("log"));
            String query = PyRepr.strOf(data.get("query"));
            BigInteger batch = PyJson.toInt(data.get("batch"));
            long partition = clamp(optional(data, "partition", -1));
            long attempt = clamp(optional(data, "attempt", 0));
            long task = clamp(optional(data, "task", -1));
            long epoch = clamp(optional(data, "epoch", 0));
            long preparedAtMs = clamp(optional(data, "prepared_at_ms", 0));
            if (batch.bitLength() > 63) {
                throw new EventsException("the XID of batch " + batch + " of query " + query
                        + " names a batch id beyond 64 bits, which this reader does not handle");
            }
            return new BatchXid(log, query, batch.longValue(), partition, attempt, task, epoch,
                    preparedAtMs);
        } catch (IllegalArgumentException notOurs) {
            return null;
        } catch (ArithmeticException overflow) {
            throw new EventsException("a PREPARE's XID cannot be read: " + overflow.getMessage(),
                    overflow);
        }
    }

    private static BigInteger optional(JsonNode data, String key, long absent) {
        JsonNode value = data.get(key);
        return value == null ? BigInteger.valueOf(absent) : PyJson.toInt(value);
    }

    private static long clamp(BigInteger value) {
        if (value.bitLength() <= 63) {
            return value.longValue();
        }
        return value.signum() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
    }
}
