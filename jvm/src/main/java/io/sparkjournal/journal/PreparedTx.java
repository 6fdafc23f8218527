package io.sparkjournal.journal;

import java.util.Collections;
import java.util.List;

/**
 * A transaction whose PREPARE is durable and whose outcome is not (FORMAT.md,
 * "Record"): the caller decides. {@link #recordIds()}
 * lists every record of it in append order (deletes included);
 * {@link #records()} the ADD/UPDATE ones as they will be live if it commits.
 */
public final class PreparedTx {

    private final long txId;
    private final byte[] xid;
    private final List<Long> recordIds;
    private final List<LiveRecord> records;

    PreparedTx(long txId, byte[] xid, List<Long> recordIds, List<LiveRecord> records) {
        this.txId = txId;
        this.xid = xid;
        this.recordIds = Collections.unmodifiableList(recordIds);
        this.records = Collections.unmodifiableList(records);
    }

    /** The tx id (u64, read unsigned). */
    public long txId() {
        return txId;
    }

    /** The XID the PREPARE carried (opaque bytes; a copy). */
    public byte[] xid() {
        return xid.clone();
    }

    /** Every record id of the transaction, in append order (u64s). */
    public List<Long> recordIds() {
        return recordIds;
    }

    /** Its ADD/UPDATE records, as they would be live. */
    public List<LiveRecord> records() {
        return records;
    }
}
