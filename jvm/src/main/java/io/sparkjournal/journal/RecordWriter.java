package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;

/**
 * The write path of a {@link LaneAppender}: encoded records go into a
 * block-aligned buffer of bufferSize bytes, which is written into the current
 * data file padded with zeros to the block, and synced when asked (one
 * thread, no timed flush: an unsynced record stays in this buffer until the
 * buffer fills, a synced call, {@link #sync} or {@link #close}; FORMAT.md,
 * "Records bigger than the write buffer" for a record the buffer cannot hold).
 *
 * <p>Invariants the loader relies on (FORMAT.md):
 * <ul>
 *   <li>never more than the sync window (maxIO x bufferSize) written past the
 *       last completed sync: a write that would cross it first syncs what is
 *       already written. The one exception is a record larger than the buffer,
 *       written alone: everything before it synced, one padded write, synced
 *       before anything else is written;</li>
 *   <li>a file is synced before the first write into the next one; the next
 *       file's header (fresh id, the sealed file and its end, the watermark)
 *       is written with its first records, and the first sync there makes both
 *       durable;</li>
 *   <li>each write starts at a block boundary and ends on one: records
 *       written later start at the next boundary (the gap is zero padding).</li>
 * </ul>
 *
 * <p>Crash behaviour: a synced call returns only after the sync covering its
 * record returned; anything after the last completed sync may be lost or torn
 * (a torn tail within the window: end of data for the loader, never damage).
 * A failed write or sync poisons the writer: every later call throws, and
 * nothing acknowledged before it is lost. Not thread-safe (LaneAppender
 * serializes calls).
 */
final class RecordWriter {

    /** Encodes one record at {@code position} of {@code buffer} for the file {@code fileId}
     *  (its low 32 bits go in the record) and returns where the record ends. */
    interface Encoder {
        int encode(ByteBuffer buffer, int position, long fileId);
    }

    private final LanePool pool;
    private final AppendConfig config;
    private final int block;
    private final long window;
    private final ByteBuffer buffer;
    private ByteBuffer stage;      // records written alone, reused: grown when one needs more
    private FileChannel out;
    private long filePos;          // where buffer[0] lands in the current file; block aligned
    private int fill;              // bytes of records in the buffer
    private long dataEnd;          // exact end of the last record written into the current file
    private long unsynced;         // bytes written into the current file since its last sync
    private boolean pending;       // records appended and not yet synced
    private IOException failure;
    private boolean closed;

    /** Appends into {@code pool.current()} from {@code start} (block aligned); its data
     *  ends at {@code dataEnd} and is durable (the caller synced what it found there). */
    RecordWriter(LanePool pool, AppendConfig config, long start, long dataEnd) throws IOException {
        this.pool = pool;
        this.config = config;
        this.block = config.blockSize();
        this.window = config.syncWindow();
        this.buffer = ByteBuffer.allocateDirect(config.bufferSize());
        this.out = openForWriting(pool.current());
        this.filePos = start;
        this.dataEnd = dataEnd;
    }

    /** The current file's id and the offset the next record would take if it fits there. */
    long fileId() {
        return pool.current().fileId();
    }

    long position() {
        return filePos + fill;
    }

    /**
     * Appends a record of {@code size} bytes ({@code Layout.recordSize} of its
     * body, at most fileSize - 4096), encoded by {@code encoder} once its place
     * is known (after any roll), so the encoder sees the file it lands in.
     * Returns once durable if {@code sync}; a record larger than the buffer is
     * written alone and always returns durable.
     */
    void append(int size, Encoder encoder, boolean sync) throws IOException {
        check();
        if (size > buffer.capacity()) {
            appendAlone(size, encoder);
            return;
        }
        roomFor(size);
        fill = encoder.encode(buffer, fill, fileId());
        pending = true;
        if (sync) {
            flush(true);
        }
    }

    /** Writes and syncs every record appended; returns once they are durable. */
    void sync() throws IOException {
        check();
        flush(true);
    }

    /**
     * Seals the current file and moves into the next one now, its header
     * durable before this returns (a lane whose newest file may not be
     * appended to: LaneAppender.open).
     */
    void rollNow() throws IOException {
        check();
        roll();
        try {
            out.force(false);
        } catch (IOException failed) {
            throw poison(failed);
        }
        unsynced = 0;
    }

    /** Writes and syncs every record appended (unless the writer failed), then closes the file. */
    void close() throws IOException {
        if (closed) {
            return;
        }
        try {
            if (failure == null) {
                flush(true);
            }
        } finally {
            closed = true;
            pool.close();
            out.close();
        }
    }

    private void roomFor(int size) throws IOException {
        while (true) {
            check();
            if (filePos + fill + size > pool.current().fileSize()) {
                roll();
            } else if (fill + size > buffer.capacity()) {
                flush(false);
            } else {
                return;
            }
        }
    }

    /**
     * A record larger than the buffer: only once everything before it is
     * durable, as one padded write into the current file (or the next, when it
     * does not fit the rest), synced before anything else is written. It may
     * be larger than the sync window: a crash that tears it leaves no valid
     * record of the file after the damage (end of data, never corruption).
     */
    private void appendAlone(int size, Encoder encoder) throws IOException {
        if (size > config.fileSize() - Layout.FILE_HEADER_SIZE) {
            throw new IllegalArgumentException("a record of " + size + " bytes does not fit a"
                    + " data file of " + config.fileSize() + " bytes");
        }
        while (true) {
            check();
            if (filePos + fill + size > pool.current().fileSize()) {
                roll();
            } else if (fill > 0 || pending) {
                flush(true);
            } else {
                break;
            }
        }
        long offset = filePos;
        int length = alignUp(size, block);
        if (stage == null || stage.capacity() < length) {
            stage = ByteBuffer.allocateDirect(Math.max(length, stage == null ? 0 : 2 * stage.capacity()));
        }
        stage.clear().limit(length);
        for (int i = alignDown(size, 8); i < length; i++) {
            stage.put(i, (byte) 0);                    // the padding: the stage is reused
        }
        encoder.encode(stage, 0, fileId());
        pending = true;
        dataEnd = offset + size;
        filePos = offset + length;
        try {
            DataFileMaker.writeFully(out, stage.duplicate().position(0).limit(length), offset);
            out.force(false);
        } catch (IOException failed) {
            throw poison(failed);
        }
        unsynced = 0;
        pending = false;
    }

    /** Writes the buffer (padded to the block) and, if {@code sync}, syncs. */
    private void flush(boolean sync) throws IOException {
        check();
        if (fill == 0 && (!sync || (!pending && unsynced == 0))) {
            return;
        }
        int length = alignUp(fill, block);
        boolean syncFirst = length > 0 && unsynced > 0 && unsynced + length > window;
        for (int i = fill; i < length; i++) {
            buffer.put(i, (byte) 0);
        }
        long offset = filePos;
        if (fill > 0) {
            dataEnd = offset + fill;
        }
        filePos += length;
        fill = 0;
        try {
            if (syncFirst) {
                out.force(false);
                unsynced = 0;
            }
            if (length > 0) {
                DataFileMaker.writeFully(out, buffer.duplicate().position(0).limit(length), offset);
                unsynced += length;
            }
            if (sync) {
                out.force(false);
                unsynced = 0;
                pending = false;
            }
        } catch (IOException failed) {
            throw poison(failed);
        }
    }

    /** Seals the current file (everything in it synced) and moves into the next one,
     *  writing its header (not synced: the first sync there covers it). */
    private void roll() throws IOException {
        flush(true);
        LanePool.Rolled next = pool.roll(dataEnd);
        FileChannel sealed = out;
        try {
            out = openForWriting(next.file());
            sealed.close();
            DataFileMaker.writeFully(out, next.header(), 0);
        } catch (IOException failed) {
            throw poison(failed);
        }
        filePos = Layout.FILE_HEADER_SIZE;
        dataEnd = Layout.FILE_HEADER_SIZE;
        unsynced = Layout.FILE_HEADER_SIZE;
    }

    private static FileChannel openForWriting(LanePool.PoolFile file) throws IOException {
        return FileChannel.open(file.path(), StandardOpenOption.WRITE);
    }

    private void check() throws IOException {
        if (failure != null) {
            throw new JournalException("the lane writer stopped after a failed write or sync ("
                    + failure.getMessage() + "); everything acknowledged before it is durable."
                    + " Open the lane again to continue");
        }
        if (closed) {
            throw new JournalException("the lane writer is closed");
        }
    }

    private IOException poison(IOException failed) {
        failure = failed;
        return failed;
    }

    private static int alignDown(int value, int alignment) {
        return value / alignment * alignment;
    }

    private static int alignUp(int value, int alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }
}
