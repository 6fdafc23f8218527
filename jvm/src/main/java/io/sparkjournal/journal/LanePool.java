package io.sparkjournal.journal;

import io.sparkjournal.format.HeaderEncoder;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * The data files a {@link LaneAppender} writes: the current one, the free
 * ones it may roll into, and fresh names and ids (FORMAT.md, "Data file").
 * No reclaim: this writer never frees, reuses under a new id outside a roll,
 * or deletes a file; that is left to the Python writer and maintenance.
 *
 * <p>Ids: a fresh file id is above every id of the lane at the load (and
 * every one handed out since), so the log order holds. Names: a fresh
 * number is above every number of a data file name in the lane folder,
 * {@code .tmp} and {@code .cmp} debris and files the load skipped included,
 * so a new file never replaces one on disk.
 *
 * <p>When a roll takes the last free file, the next one is made ahead in a
 * thread (a fresh name and id reserved at once): zero-filling fileSize bytes
 * stays off the append path.
 *
 * <p>Crash behaviour: {@link #create} makes a file durable under its final
 * name before it is used (DataFileMaker). {@link #roll} only decides the
 * next file and its header; the caller writes that header at offset 0 after
 * syncing the file it seals (RecordWriter), so a crash shows either the old
 * header (the file is free, its stale records carry other ids) or the new one.
 */
final class LanePool {

    /** One data file: where it is, its id as its header says now, its own size. */
    record PoolFile(Path path, long fileId, long fileSize) {
    }

    /** The next file to write and the header block to write at its offset 0. */
    record Rolled(PoolFile file, ByteBuffer header) {
    }

    /** The highest record and tx ids handed out so far (every header written carries them). */
    interface Watermark {
        long maxRecordId();

        long maxTxId();
    }

    private final Path lane;
    private final AppendConfig config;
    private final ArrayDeque<PoolFile> free;
    private PoolFile current;
    private long nextId;
    private long nextNumber;
    private final Watermark watermark;
    private FutureTask<PoolFile> ahead;   // the next file, being made while the current fills

    /**
     * @param free        files to roll into, in the order they are taken (the lowest id first)
     * @param nextId      the first fresh file id
     * @param nextNumber  the first fresh name number
     * @param watermark   the ids handed out so far, read whenever a header is made
     */
    LanePool(Path lane, AppendConfig config, List<PoolFile> free, long nextId, long nextNumber,
             Watermark watermark) {
        this.lane = lane;
        this.config = config;
        this.free = new ArrayDeque<>(free);
        this.nextId = nextId;
        this.nextNumber = nextNumber;
        this.watermark = watermark;
    }

    PoolFile current() {
        return current;
    }

    void current(PoolFile file) {
        this.current = file;
    }

    /**
     * A new zero-filled file of fileSize bytes, durable under a fresh name, with a
     * header holding a fresh id and no previous file (free by its header until a
     * roll enters it); not put in the pool.
     */
    PoolFile create() throws IOException {
        return reserve().make();
    }

    /** A file reserved by {@link #reserve}, made by {@link #make}. */
    @FunctionalInterface
    private interface Reserved {
        PoolFile make() throws IOException;
    }

    /** A fresh name, id and header for {@link #create}, taken now (under the caller's
     *  order); the file is made when the returned task runs, in any thread. */
    private Reserved reserve() {
        Path path = lane.resolve(DataFileMaker.name(nextNumber++));
        long fileId = nextId++;
        ByteBuffer header = HeaderEncoder.forAppending(config.userVersion(), fileId,
                config.fileSize(), config.blockSize(), config.syncWindow(), 0, 0,
                watermark.maxRecordId(), watermark.maxTxId()).encode();
        long size = config.fileSize();
        return () -> {
            DataFileMaker.create(path, header, size);
            return new PoolFile(path, fileId, size);
        };
    }

    /**
     * Waits for a file being made ahead (see {@link #roll}); a writer never lets its
     * lane go with one half made. Idempotent.
     */
    void close() {
        takeAhead();
    }

    /** The file made ahead, or null if none was started or making it failed (the roll
     *  then makes one itself and meets the error, e.g. a full disk). */
    private PoolFile takeAhead() {
        FutureTask<PoolFile> made = ahead;
        ahead = null;
        if (made == null) {
            return null;
        }
        try {
            return made.get();
        } catch (ExecutionException failed) {
            return null;
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * The file to roll into after the current one, whose data ends at
     * {@code sealedEnd} and which the caller has synced: the first free file, or
     * a new one when there is none. It gets a fresh id, names the sealed file
     * and its end, keeps its own size, and carries the watermark; it becomes
     * the current file. Nothing is written to it here.
     */
    Rolled roll(long sealedEnd) throws IOException {
        PoolFile next = free.pollFirst();
        if (next == null) {
            next = takeAhead();
        }
        if (next == null) {
            next = create();
        }
        if (free.isEmpty()) {
            // The file after this one is zero-filled in a thread of its own while this
            // one fills, not at the next roll, on the append path.
            Reserved reserved = reserve();
            FutureTask<PoolFile> making = new FutureTask<>(reserved::make);
            Thread maker = new Thread(making, "sparkjournal-next-file");
            maker.setDaemon(true);
            maker.start();
            ahead = making;
        }
        long fileId = nextId++;
        ByteBuffer header = HeaderEncoder.forAppending(config.userVersion(), fileId,
                next.fileSize(), config.blockSize(), config.syncWindow(), current.fileId(),
                sealedEnd, watermark.maxRecordId(), watermark.maxTxId()).encode();
        current = new PoolFile(next.path(), fileId, next.fileSize());
        return new Rolled(current, header);
    }
}
