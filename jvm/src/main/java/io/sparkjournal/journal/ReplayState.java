package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import io.sparkjournal.format.ScanResult;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The logical state a lane's records replay into (FORMAT.md, "Record": what
 * each record type does; the read-only part: no reclaim accounting). Records are applied in log order: files by file id, records in
 * file order, each file's first {@link LoadedFile#dataRecords()} records.
 *
 * <ul>
 *   <li>ADD/UPDATE make a version the record's body; DELETE removes a live
 *       record (a DELETE of a record not live does nothing).</li>
 *   <li>ADD_TX/UPDATE_TX/DELETE_TX join their transaction (begun by its first
 *       record or its PREPARE); a PREPARE records the XID. A COMMIT applies the
 *       transaction's records in order when its count equals the number of the
 *       transaction's records in the COMMIT's own file (Artemis's per-file
 *       rule), else the transaction is dropped and its id reported as broken;
 *       a ROLLBACK drops it. A COMMIT/ROLLBACK of a transaction not open is
 *       ignored.</li>
 *   <li>A record of a prepared transaction, or a second PREPARE, is damage no
 *       writer makes: CorruptJournalException "transaction record out of
 *       order: ..." naming the file and the record's offset.</li>
 * </ul>
 * Live records keep the order they were first added (an UPDATE keeps the place;
 * a record deleted and added again goes to the end), as do transactions. The
 * highest record and tx ids seen are kept (unsigned).
 */
final class ReplayState {

    /** A transaction with records or a PREPARE and no outcome yet. */
    static final class Tx {
        final long txId;
        final List<long[]> records = new ArrayList<>();   // {type, record id}
        final List<Version> versions = new ArrayList<>();  // null for deletes
        final Map<Long, Integer> perFile = new HashMap<>();
        boolean prepared;
        byte[] xid = new byte[0];

        Tx(long txId) {
            this.txId = txId;
        }
    }

    final LinkedHashMap<Long, Version> live = new LinkedHashMap<>();
    final LinkedHashMap<Long, Tx> txs = new LinkedHashMap<>();
    final List<Long> brokenTxIds = new ArrayList<>();
    long maxRecordId;
    long maxTxId;

    /** Replays {@code files} in order (see the class); {@code checkCounts} false applies
     *  every COMMIT whatever its count (recovery's account of what was lost). */
    static ReplayState replay(Iterable<LoadedFile> files, boolean checkCounts)
            throws CorruptJournalException {
        ReplayState state = new ReplayState();
        for (LoadedFile file : files) {
            state.replayFile(file, checkCounts);
        }
        return state;
    }

    private void replayFile(LoadedFile file, boolean checkCounts) throws CorruptJournalException {
        ScanResult scan = file.scan;
        ByteBuffer view = file.bytes();
        long fid = file.fileId();
        long offset = Layout.FILE_HEADER_SIZE;
        try {
            for (int i = 0; i < file.nData; i++) {
                int type = scan.type(i);
                long recordId = scan.recordId(i);
                long txId = scan.txId(i);
                offset = scan.offset(i);
                if (type <= Layout.DELETE) {
                    if (type == Layout.DELETE) {
                        live.remove(recordId);
                    } else {
                        put(recordId, version(view, fid, scan, i));
                    }
                } else if (type <= Layout.DELETE_TX) {
                    txRecord(txId, type, recordId, fid,
                            type == Layout.DELETE_TX ? null : version(view, fid, scan, i));
                } else if (type == Layout.PREPARE) {
                    byte[] xid = new byte[scan.bodyLength(i)];
                    view.get((int) scan.bodyOffset(i), xid);
                    prepare(txId, xid);
                } else if (txs.containsKey(txId)) {
                    if (type == Layout.COMMIT
                            && (countIn(txId, fid) == scan.count(i) || !checkCounts)) {
                        commit(txId);
                    } else {
                        txs.remove(txId);
                        if (type == Layout.COMMIT) {
                            brokenTxIds.add(txId);
                        }
                    }
                }
            }
        } catch (OutOfOrder error) {
            throw new CorruptJournalException(file.name, offset,
                    "transaction record out of order: " + error.getMessage());
        }
    }

    private static Version version(ByteBuffer view, long fid, ScanResult scan, int i) {
        int bodyLength = scan.bodyLength(i);
        long largeId = 0;
        boolean bad = false;
        if ((scan.flags(i) & Layout.FLAG_LARGE) != 0) {
            if (bodyLength != Layout.LARGE_REF_SIZE) {
                bad = true;
            } else {
                largeId = view.getLong((int) scan.bodyOffset(i) + Layout.LARGE_ID);
            }
        }
        return new Version(fid, scan.offset(i), bodyLength, scan.userType(i), largeId, bad);
    }

    private void put(long recordId, Version version) {
        live.put(recordId, version);
        maxRecordId = max(maxRecordId, recordId);
    }

    private Tx tx(long txId) {
        Tx tx = txs.get(txId);
        if (tx == null) {
            tx = new Tx(txId);
            txs.put(txId, tx);
            maxTxId = max(maxTxId, txId);
        }
        return tx;
    }

    private void txRecord(long txId, int type, long recordId, long fid, Version version)
            throws OutOfOrder {
        Tx tx = tx(txId);
        if (tx.prepared) {
            throw new OutOfOrder("transaction " + Long.toUnsignedString(txId)
                    + " is prepared: it takes no more records");
        }
        tx.records.add(new long[] {type, recordId});
        tx.versions.add(version);
        tx.perFile.merge(fid, 1, Integer::sum);
        maxRecordId = max(maxRecordId, recordId);
    }

    private void prepare(long txId, byte[] xid) throws OutOfOrder {
        Tx tx = tx(txId);
        if (tx.prepared) {
            throw new OutOfOrder("transaction " + Long.toUnsignedString(txId)
                    + " is already prepared");
        }
        tx.prepared = true;
        tx.xid = xid;
    }

    private long countIn(long txId, long fid) {
        Tx tx = txs.get(txId);
        return tx == null ? 0 : tx.perFile.getOrDefault(fid, 0);
    }

    private void commit(long txId) {
        Tx tx = txs.remove(txId);
        for (int i = 0; i < tx.records.size(); i++) {
            int type = (int) tx.records.get(i)[0];
            long recordId = tx.records.get(i)[1];
            if (type == Layout.DELETE_TX || type == Layout.DELETE) {
                live.remove(recordId);
            } else {
                put(recordId, tx.versions.get(i));
            }
        }
    }

    static long max(long a, long b) {
        return Long.compareUnsigned(a, b) >= 0 ? a : b;
    }

    /** A transaction record no writer writes (FORMAT.md, "Record": damage at load). */
    private static final class OutOfOrder extends Exception {
        private static final long serialVersionUID = 1L;

        OutOfOrder(String message) {
            super(message, null, false, false);
        }
    }
}
