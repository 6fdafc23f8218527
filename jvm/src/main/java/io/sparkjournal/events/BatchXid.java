package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.StrictJson;

/**
 * The XID a sparkjournal task's PREPARE carries (COMMIT_LOG.md, "XIDs"): which
 * batch of which query the transaction belongs to, and the commit log (its
 * URI) where that batch's decision is written. JSON with "kind":
 * "sparkjournal-2pc"; never anything else is read from it.
 *
 * <p>{@link #decode} reads it strictly (JSON.md) and returns null for an XID
 * this sink did not write ("not ours", JSON.md "Error kinds"): bytes JSON.md
 * refuses, not an object, another "kind", or a field not of its type: "log"
 * and "query" strings, "batch" an integer, and, where present, "epoch" (absent:
 * 0) and "prepared_at_ms" (absent: 0, not known) integers of 0 or more,
 * "partition" (absent: -1), "attempt" (absent: 0) and "task" (absent: -1)
 * integers. Integers this reader holds in a long: a "batch", "epoch" or
 * "prepared_at_ms" above 2^63 - 1, which no writer writes, is not ours either.
 */
public record BatchXid(String log, String query, long batch, long partition, long attempt,
                       long task, long epoch, long preparedAtMs) {

    /** The XID of epoch 0 without a PREPARE time (as written before either existed). */
    public BatchXid(String log, String query, long batch, long partition, long attempt, long task) {
        this(log, query, batch, partition, attempt, task, 0, 0);
    }

    /** The "kind" of every XID this sink writes. */
    public static final String MAGIC = io.sparkjournal.format.Constants.Magics.XID_KIND;

    /** The XID's fields, or null when the XID was not written by this sink. */
    public static BatchXid decode(byte[] raw) {
        try {
            JsonNode data = StrictJson.parse(raw);
            if (!data.isObject() || !data.path(Constants.Xid.KIND).isTextual()
                    || !MAGIC.equals(data.get(Constants.Xid.KIND).textValue())) {
                return null;
            }
            return new BatchXid(StrictJson.string(data, Constants.Xid.LOG), StrictJson.string(data, Constants.Xid.QUERY),
                    StrictJson.whole(data, Constants.Xid.BATCH), signed(data, Constants.Xid.PARTITION, -1),
                    signed(data, Constants.Xid.ATTEMPT, 0), signed(data, Constants.Xid.TASK, -1),
                    StrictJson.whole(data, Constants.Xid.EPOCH, 0), StrictJson.whole(data, Constants.Xid.PREPARED_AT_MS, 0));
        } catch (StrictJson.Refused notOurs) {
            return null;
        }
    }

    private static long signed(JsonNode data, String name, long absent) {
        return data.has(name) ? StrictJson.integer(data.get(name), "\"" + name + "\"",
                Long.MIN_VALUE, Long.MAX_VALUE) : absent;
    }
}
