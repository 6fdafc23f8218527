package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import io.sparkjournal.format.RecordEncoder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Appends records to one lane after its load, by FORMAT.md's rules (records,
 * headers, rolls, ids, the sync window, "Reading: where data ends"), so a lane
 * it wrote is read, continued and maintained by any writer of the format,
 * Python's included. What it does not do (left to the Python writer, which
 * takes the same lane at another time): UPDATE/DELETE records,
 * reclaiming or deleting files (and the bodies of dead large records, and
 * orphaned ones), finishing a compaction swap, moving
 * files to attic/, keeping minFiles files (it makes the next file in a thread
 * when a roll takes the last free one, {@link LanePool}).
 *
 * <p><b>The caller holds the lane's writer lock</b> ({@code journal.lock}) for
 * as long as the appender is open: one writer per lane. Methods are
 * synchronized; calls are appended in the order they take the monitor.
 *
 * <p>{@link #open}: loads the lane (every record's CRC checked, no recovery:
 * damage fails with {@link CorruptJournalException}, and nothing is changed),
 * refuses a lane with a pending compaction swap or with files a writer must
 * set aside (see {@link AppendStart}), prepares where appends continue, then
 * rolls back every transaction a dead writer left begun but unprepared (one
 * synced ROLLBACK each, as every writer's open does); prepared ones stay for the
 * caller to commit or roll back. Record and tx ids it hands out lie above
 * every id the lane ever held (the loader's watermarks) and are never handed
 * out twice.
 *
 * <p>Durability when a call returns, and what a crash leaves (the loader's view):
 * <ul>
 *   <li>a call with {@code sync} true (and {@link #sync}, {@link #close}, and any
 *       record larger than bufferSize): its record and every one appended
 *       before it are on disk; a crash after the return loses none of them;</li>
 *   <li>{@code sync} false, and {@link #appendAddTx}: the record is in this
 *       process's buffer, written when the buffer fills or at the next synced
 *       call (there is no timed flush), or written and not synced; a crash may
 *       lose it and any record after the last sync, or leave them torn: the
 *       loader drops such a tail (reported as a torn tail) and the next writer
 *       zeroes it;</li>
 *   <li>a transaction's records count once its COMMIT is durable; a PREPARE
 *       made durable keeps the transaction across crashes (prepared); one with
 *       neither is rolled back by the next writer's open.</li>
 * </ul>
 * An ADD or ADD_TX body above largeRecordSize (or, with it 0, whose record
 * would not fit a data file) is a large record: its body is stored durably
 * in {@code large/} first ({@link LargeBodyWriter}), then its 24-byte
 * reference is appended as above.
 * A failed write or sync stops the appender: every later call throws, and
 * everything acknowledged before is durable; open the lane again to go on.
 *
 * <p>A crash inside {@link #open} leaves what the next open handles again: a
 * zeroing cut short leaves zeros or the same tail; a first file cut short in
 * its creation is a {@code .tmp} (deleted by the next writer's load); a
 * ROLLBACK not yet durable leaves its transaction open, to be rolled back by
 * the next writer.
 */
public final class LaneAppender implements AutoCloseable {

    private final Path lane;
    private final AppendConfig config;
    private final RecordWriter writer;
    private final OpenTxs txs;
    private final ReplayState state;          // only its id watermarks are kept current
    private final LoadReport loadReport;
    private final List<Long> rolledBack;
    private final Map<Long, byte[]> prepared = new LinkedHashMap<>();   // tx id -> XID
    private final LargeBodyWriter largeBodies;

    private LaneAppender(Path lane, AppendConfig config, AppendStart.Start start,
                         RecordWriter writer) {
        this.lane = lane;
        this.config = config;
        this.writer = writer;
        this.state = start.state();
        this.txs = OpenTxs.from(state);
        this.loadReport = start.report();
        this.largeBodies = new LargeBodyWriter(lane);
        this.rolledBack = Collections.unmodifiableList(txs.unprepared());
        for (ReplayState.Tx tx : state.txs.values()) {
            if (tx.prepared) {
                prepared.put(tx.txId, tx.xid.clone());
            }
        }
    }

    /** Opens the lane at {@code lane} for appending (see the class); creates the folder if it
     *  does not exist. The folder and every file the appender makes get the modes
     *  {@link DiskModes#forPath} gives them, less the umask. */
    public static LaneAppender open(Path lane, AppendConfig config) throws IOException {
        if (!Files.isDirectory(lane)) {
            DiskModes.makeDirs(lane);
        }
        createFileSetLock(lane);
        AppendStart.Start start = AppendStart.prepare(lane, config);
        RecordWriter writer = new RecordWriter(start.pool(), config, start.offset(), start.dataEnd());
        LaneAppender appender = new LaneAppender(lane, config, start, writer);
        try {
            if (start.rollFirst()) {
                writer.rollNow();
            }
            for (long txId : appender.rolledBack) {
                appender.rollback(txId, true);
            }
        } catch (IOException | RuntimeException failed) {
            try {
                writer.close();
            } catch (IOException ignored) {
                failed.addSuppressed(ignored);
            }
            throw failed;
        }
        return appender;
    }

    /** A plain record (ADD); durable on return if {@code sync}. The body (position to limit)
     *  is copied before this returns; its buffer is not moved. */
    public synchronized void appendAdd(long recordId, int userType, ByteBuffer body, boolean sync)
            throws IOException {
        append(Layout.ADD, recordId, 0, userType, body, sync);
    }

    /** A record of transaction {@code txId} (ADD_TX), which it begins if new; never synced
     *  by itself (its COMMIT is). */
    public synchronized void appendAddTx(long txId, long recordId, int userType, ByteBuffer body)
            throws IOException {
        checkTxId(txId);
        txs.checkRecord(txId);
        append(Layout.ADD_TX, recordId, txId, userType, body, false);
    }

    /** PREPARE with the transaction's XID (opaque bytes); durable on return if {@code sync}. */
    public synchronized void prepare(long txId, byte[] xid, boolean sync) throws IOException {
        checkTxId(txId);
        txs.checkPrepare(txId);
        append(Layout.PREPARE, 0, txId, 0, ByteBuffer.wrap(xid), sync);
        prepared.put(txId, xid.clone());
    }

    /** COMMIT of an open transaction; its records are live once this is durable. */
    public synchronized void commit(long txId, boolean sync) throws IOException {
        txs.checkEnd(txId);
        append(Layout.COMMIT, 0, txId, 0, ByteBuffer.allocate(0), sync);
        prepared.remove(txId);
    }

    /** ROLLBACK of an open transaction. */
    public synchronized void rollback(long txId, boolean sync) throws IOException {
        txs.checkEnd(txId);
        append(Layout.ROLLBACK, 0, txId, 0, ByteBuffer.allocate(0), sync);
        prepared.remove(txId);
    }

    /** A record id above every one the lane holds or handed out (not written anywhere until
     *  a record carries it; a header written at the next roll carries it). */
    public synchronized long nextRecordId() {
        state.maxRecordId++;
        return state.maxRecordId;
    }

    /** A tx id above every one the lane holds or handed out. */
    public synchronized long nextTxId() {
        state.maxTxId++;
        return state.maxTxId;
    }

    /** Writes and syncs everything appended; every record is durable on return. */
    public synchronized void sync() throws IOException {
        writer.sync();
    }

    /** Writes and syncs everything appended, then closes the file (idempotent). Transactions
     *  left open are the next writer's to roll back; prepared ones stay prepared. */
    @Override
    public synchronized void close() throws IOException {
        writer.close();
    }

    /** Transactions a dead writer left begun and unprepared, rolled back by {@link #open}. */
    public List<Long> rolledBackTxIds() {
        return rolledBack;
    }

    /** The lane's prepared transactions with no outcome yet, tx id to XID, in the order
     *  they were prepared: those the load at {@link #open} found, then those prepared
     *  since; a copy. */
    public synchronized Map<Long, byte[]> prepared() {
        return new LinkedHashMap<>(prepared);
    }

    /** What the load at {@link #open} found (a torn tail, prepared transactions, ...). */
    public LoadReport loadReport() {
        return loadReport;
    }

    /** The id of the file being appended to. */
    public synchronized long currentFileId() {
        return writer.fileId();
    }

    public Path lane() {
        return lane;
    }

    private void append(int type, long recordId, long txId, int userType, ByteBuffer body,
                        boolean sync) throws IOException {
        if (userType < 0 || userType > 0xFFFF) {
            throw new IllegalArgumentException("user record type " + userType + " is not 0..65535");
        }
        boolean large = (type == Layout.ADD || type == Layout.ADD_TX)
                && config.goesToLargeStore(body.remaining());
        ByteBuffer placed = large ? largeBodies.store(body)   // durable before its reference is appended
                : body.duplicate();
        int flags = large ? Layout.FLAG_LARGE : 0;
        long size = Layout.recordSize(placed.remaining());
        long limit = config.fileSize() - Layout.FILE_HEADER_SIZE;
        if (size > limit) {
            throw new JournalException("a " + Layout.typeName(type) + " record of " + size
                    + " bytes (a body of " + body.remaining() + ") does not fit a data file: at"
                    + " most fileSize - " + Layout.FILE_HEADER_SIZE + " = " + limit + " bytes;"
                    + " only ADD bodies go to the large store: raise fileSize");
        }
        writer.append((int) size, (buffer, position, fileId) -> {
            long count = type >= Layout.PREPARE ? txs.countIn(txId, fileId) : 0;
            int end = RecordEncoder.encode(buffer, position, type, flags, userType,
                    Layout.fileId32(fileId), recordId, txId, count, placed);
            applied(type, recordId, txId, fileId);
            return end;
        }, sync);
    }

    /** The record is in the writer: the transactions and the watermarks follow it. */
    private void applied(int type, long recordId, long txId, long fileId) {
        state.maxRecordId = ReplayState.max(state.maxRecordId, recordId);
        state.maxTxId = ReplayState.max(state.maxTxId, txId);
        if (type == Layout.ADD_TX) {
            txs.recordAppended(txId, fileId);
        } else if (type == Layout.PREPARE) {
            txs.prepared(txId);
        } else if (type == Layout.COMMIT || type == Layout.ROLLBACK) {
            txs.ended(txId);
        }
    }

    /** Tx id 0 marks a record of no transaction in the format: it names none. */
    private static void checkTxId(long txId) {
        if (txId == 0) {
            throw new IllegalArgumentException("tx id 0 is not a transaction (records outside"
                    + " one carry 0)");
        }
    }

    /**
     * Makes the lane's file-set lock file, as every writer's open does, so
     * that readers (Python and JVM) lock the file set from now on. Only when it
     * is missing: in this JVM no channel of it may be closed while a snapshot
     * holds its record lock (FileSetLock), and none exists before the file does.
     */
    private static void createFileSetLock(Path lane) throws IOException {
        Path lock = lane.resolve(FileSetLock.NAME);
        if (!Files.exists(lock)) {
            try {
                Files.createFile(lock, DiskModes.fileAttribute(lock));
            } catch (FileAlreadyExistsException raced) {
                // another process made it meanwhile
            }
        }
    }
}
