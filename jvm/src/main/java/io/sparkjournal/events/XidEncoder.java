package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
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
        xid.put(Constants.Xid.KIND, BatchXid.MAGIC);
        xid.put(Constants.Xid.LOG, log);
        xid.put(Constants.Xid.QUERY, query);
        xid.put(Constants.Xid.BATCH, batch);
        xid.put(Constants.Xid.EPOCH, epoch);
        xid.put(Constants.Xid.PARTITION, partition);
        xid.put(Constants.Xid.ATTEMPT, attempt);
        xid.put(Constants.Xid.TASK, task);
        xid.put(Constants.Xid.PREPARED_AT_MS, preparedAtMs);
        return CanonicalJson.bytes(xid);
    }
}
