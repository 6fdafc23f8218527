package io.sparkjournal.events;

import io.sparkjournal.journal.CanonicalJson;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The writing side of {@link BatchXid}: the XID bytes a task's PREPARE carries
 * (COMMIT_LOG.md, "XIDs"), in the canonical form of JSON.md ("Writer
 * requirements"), every field written even when 0. Any reader of the spec
 * reads back the same values; the bytes need not equal another
 * implementation's. A string holding a lone surrogate (not text; a Spark
 * query id or a path never holds one) is an IllegalArgumentException.
 */
public final class XidEncoder {

    private XidEncoder() {
    }

    /** The XID bytes of {@code xid} (its decode gives back the same fields). */
    public static byte[] encode(BatchXid xid) {
        return encode(xid.log(), xid.query(), xid.batch(), xid.partition(), xid.attempt(),
                xid.task(), xid.epoch(), xid.preparedAtMs());
    }

    /** The XID bytes of these fields. */
    public static byte[] encode(String log, String query, long batch, long partition, long attempt,
                                long task, long epoch, long preparedAtMs) {
        Map<String, Object> xid = new LinkedHashMap<>();
        xid.put("kind", BatchXid.MAGIC);
        xid.put("log", log);
        xid.put("query", query);
        xid.put("batch", batch);
        xid.put("epoch", epoch);
        xid.put("partition", partition);
        xid.put("attempt", attempt);
        xid.put("task", task);
        xid.put("prepared_at_ms", preparedAtMs);
        return CanonicalJson.bytes(xid);
    }
}
