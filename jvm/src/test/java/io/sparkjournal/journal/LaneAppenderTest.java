package io.sparkjournal.journal;

import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Lanes the JVM's {@link LaneAppender} writes into a temporary folder, loaded
 * back by {@link LaneSnapshot} (LaneLoader, DataEnd, ReplayState): what was
 * acknowledged is read back, transactions keep their state across a reopen,
 * and damage is a torn tail only where FORMAT.md says so.
 */
public final class LaneAppenderTest {

    /** 16 KiB files of 4 KiB buffers: a few records of 1500 bytes fill a file. */
    private static final AppendConfig SMALL = new AppendConfig(16384, 4096, 512, 2, 0);

    private LaneAppenderTest() {
    }

    public static void testRecordsAppendedLoadBackInOrderWithTheirBodies() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane");
            Map<Long, String> written = append(lane, 3, 100);
            try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                equal(written, bodies(snapshot), "records read back");
                equal(List.of(0, 1, 2), userTypes(snapshot), "user types");
                equal(3L, snapshot.maxRecordId(), "max record id");
                equal(null, snapshot.report().tornTail(), "torn tail");
            }
        }
    }

    public static void testABodyThatDoesNotFitADataFileIsALargeRecordReadBackWhole()
            throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane");
            Map<Long, String> written = append(lane, 2, 20_000);     // files of 16 KiB
            try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                equal(written, bodies(snapshot), "large records read back");
                equal(List.of(true, true), snapshot.records().stream().map(LiveRecord::isLarge)
                        .toList(), "stored as large records");
            }
            try (var bodies = Files.list(lane.resolve(LargeBodies.FOLDER))) {
                equal(2L, bodies.filter(f -> Files.isRegularFile(f)
                        && f.getFileName().toString().matches("[0-9a-f]{16}\\.body")).count(),
                        "one body file per record");
            }
        }
    }

    public static void testFullFilesRollAndEachNamesTheFileWithDataBeforeItAndItsEnd()
            throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane");
            Map<Long, String> written = append(lane, 20, 1500);
            try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                equal(written, bodies(snapshot), "records read back");
                List<LoadedFile> files = snapshot.files().stream()
                        .filter(file -> file.dataRecords() > 0).toList();
                isTrue(files.size() >= 3, "20 records of 1500 bytes filled only " + files.size()
                        + " files of 16 KiB");
                for (int i = 1; i < files.size(); i++) {
                    equal(files.get(i - 1).fileId(), files.get(i).header().prevFileId(),
                            "previous file id in file " + i);
                    equal(files.get(i - 1).end(), files.get(i).header().prevEnd(),
                            "previous end in file " + i);
                }
            }
        }
    }

    public static void testAPreparedTransactionOutlivesAReopenAndAnUnpreparedOneIsRolledBack()
            throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane");
            byte[] xid = {1, 2, 3, 0, (byte) 0xff};
            long prepared;
            long unprepared;
            try (Writer writer = new Writer(lane)) {
                prepared = writer.appender.nextTxId();
                unprepared = writer.appender.nextTxId();
                writer.appender.appendAddTx(prepared, 10, 7, ByteBuffer.wrap(new byte[]{42}));
                writer.appender.prepare(prepared, xid, true);
                writer.appender.appendAddTx(unprepared, 11, 7, ByteBuffer.wrap(new byte[]{43}));
                writer.appender.sync();
            }
            try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                equal(0, snapshot.size(), "live records before any commit");
                equal(1, snapshot.prepared().size(), "prepared transactions");
                equal(prepared, snapshot.prepared().get(0).txId(), "prepared tx id");
                equal(xid, snapshot.prepared().get(0).xid(), "prepared XID");
                equal(Map.of(unprepared, List.of(11L)), snapshot.openTransactions(),
                        "open transactions");
            }
            try (Writer writer = new Writer(lane)) {
                equal(List.of(unprepared), writer.appender.rolledBackTxIds(), "rolled back at open");
                equal(List.of(prepared), new ArrayList<>(writer.appender.prepared().keySet()),
                        "prepared at open");
                writer.appender.commit(prepared, true);
            }
            try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                equal(Map.of(10L, "2a"), bodies(snapshot), "live records after commit");
                equal(0, snapshot.prepared().size(), "prepared after commit");
                equal(Map.of(), snapshot.openTransactions(), "open after commit");
            }
        }
    }

    public static void testADamagedLastRecordOfTheNewestFileIsATornTail() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane");
            Map<Long, String> written = append(lane, 3, 100);
            long dataEnd;
            try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                dataEnd = snapshot.get(2).offset() + Layout.recordSize(100);
            }
            long offset = flipBodyByte(lane, 3);
            written.remove(3L);
            try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                equal(written, bodies(snapshot), "records read back");
                LoadReport.TornTail torn = snapshot.report().tornTail();
                isTrue(torn != null, "no torn tail reported");
                equal(dataEnd, torn.offset(), "where the torn tail begins (the data ends)");
                equal(dataEnd, snapshot.files().get(0).end(), "end of the file's data");
                equal(0, torn.recordsDropped(), "complete records dropped");
            }
        }
    }

    public static void testADamagedRecordInAnOlderFileIsCorruptionAndRecoveryNamesTheLoss()
            throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane");
            append(lane, 20, 1500);
            long fileId;
            String firstFile;
            List<Long> inFirstFile = new ArrayList<>();
            try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                fileId = snapshot.files().get(0).fileId();
                firstFile = snapshot.files().get(0).path().toString();
                snapshot.records().stream().filter(r -> r.fileId() == fileId)
                        .forEach(r -> inFirstFile.add(r.recordId()));
            }
            isTrue(inFirstFile.size() >= 3, "the first file holds " + inFirstFile);
            long damaged = inFirstFile.get(1);
            long offset = flipBodyByte(lane, damaged);
            CorruptJournalException corrupt = raises(CorruptJournalException.class,
                    () -> LaneSnapshot.read(lane).close());
            equal(offset, corrupt.offset(), "offset of the damage");
            equal(firstFile, corrupt.path(), "file named");
            try (LaneSnapshot recovered = LaneSnapshot.read(lane, true, true)) {
                equal(1, recovered.report().recoveries().size(), "recoveries");
                LoadReport.Recovery recovery = recovered.report().recoveries().get(0);
                equal(offset, recovery.offset(), "recovered damage offset");
                List<Long> lost = new ArrayList<>(inFirstFile);
                lost.remove(damaged);
                equal(lost, recovery.lostRecordIds(), "records lost with the file");
                TreeSet<Long> live = new TreeSet<>();
                recovered.records().forEach(r -> live.add(r.recordId()));
                isTrue(!live.contains(damaged) && !live.contains(inFirstFile.get(0)),
                        "a record of the damaged file is live: " + live);
                equal(20 - inFirstFile.size(), live.size(), "live records after recovery");
            }
        }
    }

    /** Appends {@code n} synced records (ids 1..n, user type id - 1, bodies of {@code size}
     *  bytes) to a new lane; id to body, in hex. */
    private static Map<Long, String> append(Path lane, int n, int size) throws IOException {
        Map<Long, String> written = new LinkedHashMap<>();
        try (Writer writer = new Writer(lane)) {
            for (int i = 0; i < n; i++) {
                long id = writer.appender.nextRecordId();
                byte[] body = new byte[size];
                for (int j = 0; j < size; j++) {
                    body[j] = (byte) (id * 31 + j);
                }
                writer.appender.appendAdd(id, (int) id - 1, ByteBuffer.wrap(body), true);
                written.put(id, HexFormat.of().formatHex(body));
            }
        }
        return written;
    }

    /** Flips the first body byte of live record {@code recordId}; the record's offset. */
    private static long flipBodyByte(Path lane, long recordId) throws IOException {
        Path file;
        long offset;
        try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
            LiveRecord record = snapshot.get(recordId);
            offset = record.offset();
            file = snapshot.files().stream().filter(f -> f.fileId() == record.fileId())
                    .findFirst().orElseThrow().path();
        }
        try (RandomAccessFile raw = new RandomAccessFile(file.toFile(), "rw")) {
            long at = offset + Layout.RECORD_HEADER_SIZE;
            raw.seek(at);
            int old = raw.read();
            raw.seek(at);
            raw.write(old ^ 0x01);
        }
        return offset;
    }

    /** Live record id to body, in hex, in snapshot order. */
    private static Map<Long, String> bodies(LaneSnapshot snapshot) throws IOException {
        Map<Long, String> read = new LinkedHashMap<>();
        for (LiveRecord record : snapshot.records()) {
            ByteBuffer body = record.body();
            byte[] bytes = new byte[body.remaining()];
            body.get(bytes);
            read.put(record.recordId(), HexFormat.of().formatHex(bytes));
        }
        return read;
    }

    private static List<Integer> userTypes(LaneSnapshot snapshot) {
        return snapshot.records().stream().map(LiveRecord::userType).toList();
    }

    /** An appender of {@link #SMALL} holding the lane's writer lock, as a JVM writer holds it. */
    private static final class Writer implements AutoCloseable {
        final LaneWriterLock lock;
        final LaneAppender appender;

        Writer(Path lane) throws IOException {
            Files.createDirectories(lane);
            lock = LaneWriterLock.tryAcquire(lane);
            isTrue(lock != null, "the lane's writer lock is held elsewhere");
            appender = LaneAppender.open(lane, SMALL);
        }

        @Override
        public void close() throws IOException {
            try (lock) {
                appender.close();
            }
        }
    }
}
