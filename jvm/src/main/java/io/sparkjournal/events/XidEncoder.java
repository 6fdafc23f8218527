package io.sparkjournal.events;

import io.sparkjournal.journal.PythonText;

import java.nio.charset.StandardCharsets;

/**
 * The writing side of {@link BatchXid}: the XID bytes a task's PREPARE carries,
 * exactly as Python's {@code BatchXid.encode} (events/xid.py) makes them, so a
 * lane a JVM task wrote holds the very bytes a Python task would have written:
 *
 * <pre>json.dumps({"kind": "sparkjournal-2pc", **asdict(xid)}, sort_keys=True).encode()</pre>
 *
 * That is: the keys in sorted order (attempt, batch, epoch, kind, log,
 * partition, prepared_at_ms, query, task; each written even when 0), {@code ", "} between items and {@code ": "} after keys,
 * integers in decimal, strings with Python's {@code ensure_ascii} escapes
 * ({@code \" \\ \n \r \t \b \f}, every other character outside space..'~' as
 * {@code \}{@code uXXXX} in lower-case hex, characters beyond the BMP as their
 * UTF-16 surrogate pair). The result is pure ASCII.
 *
 * <p>A string holding an unpaired surrogate is escaped as Python escapes one
 * (it cannot come from a Spark query id or a path, which are valid Unicode).
 */
public final class XidEncoder {

    private XidEncoder() {
    }

    /** The XID bytes of {@code xid} (its decode gives back the same fields). */
    public static byte[] encode(BatchXid xid) {
        return encode(xid.log(), xid.query(), xid.batch(), xid.partition(), xid.attempt(),
                xid.task(), xid.epoch(), xid.preparedAtMs());
    }

    /** The XID bytes of these fields (Python's BatchXid(log, query, batch, partition,
     *  attempt, task, epoch, prepared_at_ms).encode()). */
    public static byte[] encode(String log, String query, long batch, long partition, long attempt,
                                long task, long epoch, long preparedAtMs) {
        StringBuilder out = new StringBuilder(144 + log.length() + query.length());
        out.append("{\"attempt\": ").append(attempt);
        out.append(", \"batch\": ").append(batch);
        out.append(", \"epoch\": ").append(epoch);
        out.append(", \"kind\": ");
        string(out, BatchXid.MAGIC);
        out.append(", \"log\": ");
        string(out, log);
        out.append(", \"partition\": ").append(partition);
        out.append(", \"prepared_at_ms\": ").append(preparedAtMs);
        out.append(", \"query\": ");
        string(out, query);
        out.append(", \"task\": ").append(task);
        out.append('}');
        return out.toString().getBytes(StandardCharsets.US_ASCII);
    }

    private static void string(StringBuilder out, String text) {
        PythonText.string(text, out);
    }
}
