package io.sparkjournal.journal;

import io.sparkjournal.format.CorruptFileException;
import io.sparkjournal.format.FileHeader;
import io.sparkjournal.format.Layout;
import io.sparkjournal.format.RecordScan;
import io.sparkjournal.format.ScanResult;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Loads a lane read only (FORMAT.md, "Reading: where data ends"): lists
 * its data files (LaneFiles), reads each header, maps and scans each file
 * (but those free by their headers, FreeByHeader),
 * decides where data ends (DataEnd) and replays the data (ReplayState).
 * Nothing on disk is changed, ever.
 *
 * <p>Opening the files, in listing order: a header that cannot be trusted
 * (CorruptFileException from FileHeader) is skipped with a warning; a newer
 * header version fails the load (FormatVersionException); a file whose size
 * differs from its header's is skipped with a warning when it holds no record
 * of its own, else it is damage; two files with one file id fail the load
 * (CorruptJournalException at offset 16); a file that vanishes while being
 * opened fails it (offset 0). Files are then taken in file id order.
 *
 * <p>Damage fails the load with CorruptJournalException naming the first
 * damaged file and offset, unless {@code recover}: then damaged files are
 * left out of the replay (and left where they are) and the report lists, for
 * each, the records and transactions lost, judged against a replay of every
 * valid record, those past the damage included, with every COMMIT applied.
 */
final class LaneLoader {

    /** What a load hands to LaneSnapshot. */
    record Loaded(List<LoadedFile> files, ReplayState state, LoadReport report,
                  ControlFile pendingSwap) {
    }

    private LaneLoader() {
    }

    static Loaded load(Path lane, boolean verifyCrc, boolean recover) throws IOException {
        LoadReport report = new LoadReport();
        LaneFiles listing = LaneFiles.list(lane);
        List<LoadedFile> files = open(listing.paths(), report);
        Set<Long> free = FreeByHeader.ids(files);
        Map<Long, Long> endsNamed = new HashMap<>();       // file id -> its end, as its successor names it
        for (LoadedFile file : files) {
            if (file.header.prevFileId() != 0) {
                endsNamed.put(file.header.prevFileId(), file.header.prevEnd());
            }
        }
        for (LoadedFile file : files) {
            file.scan = free.contains(file.fileId()) ? ScanResult.empty()
                    : scan(file, verifyCrc, endsNamed.get(file.fileId()), report);
        }
        List<DataEnd.Damage> damaged = DataEnd.classify(files, report);
        if (!damaged.isEmpty() && !recover) {
            DataEnd.Damage first = damaged.get(0);
            throw new CorruptJournalException(first.file().name, first.offset(), first.detail());
        }
        Set<Long> damagedIds = DataEnd.ids(damaged);
        List<LoadedFile> intact = new ArrayList<>();
        for (LoadedFile file : files) {
            if (!damagedIds.contains(file.fileId())) {
                intact.add(file);
            }
        }
        ReplayState state = ReplayState.replay(intact, true);
        // Ids once handed out are never handed out again: every header's watermark counts.
        for (LoadedFile file : files) {
            state.maxRecordId = ReplayState.max(state.maxRecordId, file.header.maxRecordId());
            state.maxTxId = ReplayState.max(state.maxTxId, file.header.maxTxId());
        }
        if (!damaged.isEmpty()) {
            for (DataEnd.Damage damage : damaged) {
                damage.file().nData = damage.file().scan.n();
            }
            ReplayState full = ReplayState.replay(files, false);
            for (DataEnd.Damage damage : damaged) {
                files.remove(damage.file());
                report.recoveries.add(Recoveries.whatWasLost(full, state, damage));
            }
        }
        report.files = files.size();
        for (LoadedFile file : files) {
            report.recordsScanned += file.nData;
            report.bytesScanned += file.end;
        }
        report.liveRecords = state.live.size();
        state.txs.values().forEach(tx -> {
            if (tx.prepared) {
                report.preparedTxIds.add(tx.txId);
            }
        });
        report.brokenTxIds.addAll(state.brokenTxIds);
        return new Loaded(files, state, report, listing.pendingSwap());
    }

    /**
     * The file's records: as a scan of it this JVM kept when the file has not
     * changed since (SealedScans), else scanned now. A scan that checked every
     * CRC is kept when it saw the whole of a file no write can still reach:
     * one written whole by compaction, its data ending at its sealed end, or
     * one its successor's header names as the file sealed before it, its data
     * ending where that header says ({@code namedEnd}; the writer synced it
     * before writing that header, which this load read before this scan).
     */
    private static ScanResult scan(LoadedFile file, boolean verifyCrc, Long namedEnd, LoadReport report)
            throws IOException {
        SealedScans.Identity identity = file.sizeDamage == null
                ? SealedScans.identity(file.path, file.fileId()) : null;
        ScanResult kept = SealedScans.get(identity);
        if (kept != null) {
            report.filesReused++;
            return kept;
        }
        ScanResult scan = RecordScan.scan(file.bytes(), Layout.FILE_HEADER_SIZE,
                Layout.fileId32(file.fileId()), verifyCrc);
        long sealedEnd = file.header.sealedEnd();
        boolean whole = sealedEnd != 0 ? scan.cleanEnd() == sealedEnd && scan.n() == scan.nClean()
                : namedEnd != null && scan.cleanEnd() == namedEnd;
        if (verifyCrc && whole) {
            SealedScans.keep(identity, scan);
        }
        return scan;
    }

    /** Reads every listed file's header, maps the usable ones; file id order. */
    private static List<LoadedFile> open(List<Path> paths, LoadReport report) throws IOException {
        List<Object[]> usable = new ArrayList<>();        // {header, path, size damage}
        Map<Long, Path> seen = new HashMap<>();
        for (Path path : paths) {
            FileHeader header;
            String damage = null;
            ByteBuffer raw = ByteBuffer.allocate(Layout.FILE_HEADER_SIZE);
            long actual;
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
                while (raw.hasRemaining() && channel.read(raw) >= 0) {
                    // until the header block is read or the file ends
                }
                actual = channel.size();
            } catch (NoSuchFileException gone) {
                throw vanished(path);
            }
            raw.flip();
            try {
                header = FileHeader.parse(raw, path.toString());
            } catch (CorruptFileException bad) {
                report.warnings.add(path + ": " + badHeaderText(bad, raw) + "; skipped");
                continue;
            }
            if (actual != header.fileSize()) {
                String wrong = "file is " + actual + " bytes, its header says "
                        + Long.toUnsignedString(header.fileSize());
                if (!holdsRecords(path, header)) {
                    report.warnings.add(path + ": " + wrong + "; skipped");
                    continue;
                }
                String how = Long.compareUnsigned(actual, header.fileSize()) < 0
                        ? "cut it short (records past that cannot be listed)" : "appended to it";
                damage = "the file is " + actual + " bytes but its header says "
                        + Long.toUnsignedString(header.fileSize())
                        + ": something outside sparkjournal " + how;
            }
            Path other = seen.putIfAbsent(header.fileId(), path);
            if (other != null) {
                throw new CorruptJournalException(path.toString(), Layout.HDR_FILE_ID, "file id "
                        + Long.toUnsignedString(header.fileId()) + " is also the id of " + other);
            }
            usable.add(new Object[] {header, path, damage});
        }
        usable.sort((a, b) -> Long.compareUnsigned(((FileHeader) a[0]).fileId(),
                ((FileHeader) b[0]).fileId()));
        List<LoadedFile> loaded = new ArrayList<>();
        for (Object[] entry : usable) {
            Path path = (Path) entry[1];
            loaded.add(new LoadedFile(path, (FileHeader) entry[0], map(path), (String) entry[2]));
        }
        return loaded;
    }

    /** The whole file, mapped read only. */
    static ByteBuffer map(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size > Integer.MAX_VALUE) {
                throw new JournalException("data file " + path + " is " + size + " bytes: one"
                        + " Java ByteBuffer maps at most 2 GiB - 1, and this reader scans a"
                        + " file whole; read this lane with the Python reader");
            }
            return channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
        } catch (NoSuchFileException gone) {
            throw vanished(path);
        }
    }

    /** A data file listed a moment ago is gone: only something outside sparkjournal removes
     *  data files while the file-set lock is held shared. */
    private static CorruptJournalException vanished(Path path) {
        return new CorruptJournalException(path.toString(), 0, "the data file disappeared while"
                + " the lane was being opened (removed by something other than sparkjournal)");
    }

    /** A file of the wrong size that holds records of its own lost some: damage, not a pool
     *  file to skip. Always checked with CRCs. */
    private static boolean holdsRecords(Path path, FileHeader header) throws IOException {
        return RecordScan.scan(map(path), Layout.FILE_HEADER_SIZE,
                Layout.fileId32(header.fileId()), true).n() > 0;
    }

    /** The reason a data file's header is refused: its magic shown in hex beside the expected one. */
    private static String badHeaderText(CorruptFileException bad, ByteBuffer raw) {
        if (!bad.detail().startsWith("magic ")) {
            return bad.detail();
        }
        byte[] magic = new byte[Layout.FILE_MAGIC.length];
        raw.duplicate().get(magic);
        return "magic " + Shown.bytes(magic) + " is not "
                + Shown.bytes(Layout.FILE_MAGIC);
    }
}
