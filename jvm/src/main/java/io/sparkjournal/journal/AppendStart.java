package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a {@link LaneAppender} starts in a lane it has just loaded (one file
 * made when the lane has none, none reclaimed; FORMAT.md, "Reading: where data
 * ends", "Free by header"):
 *
 * <ul>
 *   <li>the newest file with data (records, or a dropped torn tail) is the
 *       current file; the files after it in id order are the free pool, taken
 *       lowest id first; the lane holds no data: the lowest-id file is current
 *       (a new file is created first when the lane has none);</li>
 *   <li>appends continue at the next block boundary after the current file's
 *       end of data. Every byte a crashed writer may have left torn past that
 *       end - up to the header's sync window past it, rounded up to a block,
 *       or to where appends begin or a dropped torn tail ends if further - is
 *       zeroed when any is not zero, and the file is synced: left there, a
 *       torn record of the file's own id would end the data again before the
 *       new records at the next load, or fail it as damage once a roll seals
 *       the file (FORMAT.md, "Before its first append..."). The sync also
 *       makes durable what a killed writer left in the page cache before a
 *       roll's header can name where this file's data ends;</li>
 *   <li>the writer rolls into a fresh file before its first append when the
 *       current file may not be appended to: one written whole by compaction
 *       (a sealed end, FORMAT.md, "Data file"), or one whose header promises a
 *       smaller sync window than this writer keeps (its loader would take a
 *       crash's tail past that window for damage; FORMAT.md, the end of
 *       "Reading: where data ends").</li>
 * </ul>
 *
 * <p>Refused, with nothing changed: a lane with a compaction swap pending
 * (compact.ctl) that no live compactor finishes within 10 s (one that holds
 * the maintenance lock is waited for: it swaps as soon as this open lets the
 * file set go), and one where the load skipped files (bad header, wrong size
 * without records), which a writer must move to attic/ first (FORMAT.md, "Data
 * file"); both are left to the Python writer, which does both. The only change
 * besides the zeroing: leftover {@code data-*.sjd.tmp} files (a data file never
 * finished) are deleted, as FORMAT.md's lane directory says a load does.
 */
final class AppendStart {

    /** The maintenance lock (FORMAT.md, lane directory: {@code compact.lock}), held by a compactor
     *  or paging pass while it runs. */
    static final String MAINTENANCE_LOCK = "compact.lock";
    /** How long an open waits for a live compactor's swap (the compactor, a Python process,
     *  itself waits up to its own swap wait for readers) before refusing the lane. */
    static final long SWAP_WAIT_NANOS = 10_000_000_000L;

    /** Where to append: the pool (current file set), the first offset, the current file's
     *  end of data, whether to roll before the first append, and what the load found. */
    record Start(LanePool pool, long offset, long dataEnd, boolean rollFirst, ReplayState state,
                 LoadReport report) {
    }

    private AppendStart() {
    }

    /** Waits, holding no lock, while a live compactor (the maintenance lock held) has a swap
     *  pending in {@code lane}; true once it is done, false if the compactor is gone with the
     *  swap still pending or {@code deadline} passed. */
    private static boolean awaitSwap(Path lane, long deadline) throws IOException {
        Path control = lane.resolve(ControlFile.NAME);
        while (Files.exists(control)) {
            if (System.nanoTime() > deadline || !WriterProbe.held(lane.resolve(MAINTENANCE_LOCK))) {
                // the compactor may have ended its swap (control file removed, then its lock
                // released) between the two looks: done unless the control file is still there
                return !Files.exists(control);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("waiting for a compaction swap in " + lane);
            }
        }
        return true;
    }

    static Start prepare(Path lane, AppendConfig config) throws IOException {
        removeUnfinishedFiles(lane);
        LaneLoader.Loaded loaded;
        long deadline = System.nanoTime() + SWAP_WAIT_NANOS;
        while (true) {
            FileSetLock hold = FileSetLock.holdForReading(lane);     // no swap while it loads
            try {
                loaded = LaneLoader.load(lane, true, false);
            } finally {
                hold.close();
            }
            // A live compactor between its commit point and the end of its swap: the swap
            // polls for the file set, which our read lock held, so wait without any lock
            // until its control file is gone (or the compactor died), then load again.
            if (loaded.pendingSwap() == null || !awaitSwap(lane, deadline)) {
                break;
            }
        }
        if (loaded.pendingSwap() != null) {
            throw new JournalException("lane " + lane + " has a compaction swap pending ("
                    + ControlFile.NAME + ", generation " + loaded.pendingSwap().generation()
                    + "): the JVM appender does not finish swaps. Open the lane once with the"
                    + " Python writer (Journal.open), which finishes it, then open it here again");
        }
        if (!loaded.report().warnings().isEmpty()) {
            throw new JournalException("lane " + lane + " holds data files a writer must move to"
                    + " attic/ first (" + String.join("; ", loaded.report().warnings()) + "): the"
                    + " JVM appender moves no files. Open the lane once with the Python writer"
                    + " (Journal.open), which moves them, then open it here again");
        }
        List<LoadedFile> files = loaded.files();
        int last = -1;
        long maxId = 0;
        for (int i = 0; i < files.size(); i++) {
            if (files.get(i).nData > 0 || files.get(i).tornEnd > 0) {
                last = i;
            }
            maxId = ReplayState.max(maxId, files.get(i).fileId());
        }
        List<LanePool.PoolFile> free = new ArrayList<>();
        for (int i = Math.max(last, 0) + 1; i < files.size(); i++) {
            free.add(poolFile(files.get(i)));
        }
        ReplayState state = loaded.state();
        LanePool pool = new LanePool(lane, config, free, maxId + 1, highestNumber(lane) + 1,
                new LanePool.Watermark() {
                    public long maxRecordId() { return state.maxRecordId; }

                    public long maxTxId() { return state.maxTxId; }
                });
        long dataEnd = Layout.FILE_HEADER_SIZE;
        long offset = Layout.FILE_HEADER_SIZE;
        boolean rollFirst;
        if (files.isEmpty()) {
            pool.current(pool.create());
            rollFirst = false;
        } else {
            LoadedFile current = files.get(Math.max(last, 0));
            pool.current(poolFile(current));
            if (last >= 0) {
                dataEnd = current.end;
                offset = Math.max(alignUp(dataEnd, config.blockSize()), Layout.FILE_HEADER_SIZE);
                zeroAndSync(current, offset, config.blockSize());
            }
            rollFirst = current.header.sealedEnd() != 0
                    || Long.compareUnsigned(current.header.syncWindow(), config.syncWindow()) < 0;
        }
        return new Start(pool, offset, dataEnd, rollFirst, state, loaded.report());
    }

    private static LanePool.PoolFile poolFile(LoadedFile file) {
        return new LanePool.PoolFile(file.path, file.fileId(), file.header.fileSize());
    }

    /** Zeroes [end of data, crash reach) of the file, if any byte there is not zero, and syncs
     *  the file. The crash reach: the header's sync window past the end of data (no writer of
     *  the file had more written past its last completed sync, which lies at or before that
     *  end), rounded up to a block, or the torn end or {@code offset} where further; within
     *  the file. */
    private static void zeroAndSync(LoadedFile file, long offset, long blockSize) throws IOException {
        long from = file.end;
        long block = Math.max(Math.max(blockSize, file.header.blockSize()), 1);
        long window = Long.compareUnsigned(file.header.syncWindow(), file.header.fileSize()) < 0
                ? file.header.syncWindow() : file.header.fileSize();
        long reach = alignUp(from + window, block);
        long to = Math.min(Math.max(Math.max(file.tornEnd, offset), reach), file.header.fileSize());
        ByteBuffer bytes = file.buffer();
        boolean dirty = false;
        for (long at = from; at < to && !dirty; at++) {
            dirty = bytes.get((int) at) != 0;
        }
        try (FileChannel out = FileChannel.open(file.path, StandardOpenOption.WRITE)) {
            if (dirty) {
                DataFileMaker.writeFully(out, ByteBuffer.allocate((int) (to - from)), from);
            }
            out.force(false);
        }
    }

    /** The highest number in a data file name in the lane folder (debris included), or 0. */
    private static long highestNumber(Path lane) throws IOException {
        long highest = 0;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(lane)) {
            for (Path entry : entries) {
                highest = Math.max(highest, DataFileMaker.number(entry.getFileName().toString()));
            }
        }
        return highest;
    }

    private static void removeUnfinishedFiles(Path lane) throws IOException {
        boolean removed = false;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(lane,
                LaneFiles.DATA_PREFIX + "*" + LaneFiles.DATA_SUFFIX + ".tmp")) {
            for (Path entry : entries) {
                removed |= Files.deleteIfExists(entry);
            }
        }
        if (removed) {
            DiskModes.syncFolder(lane);
        }
    }

    private static long alignUp(long value, long alignment) {
        return (value + alignment - 1) / alignment * alignment;
    }
}
