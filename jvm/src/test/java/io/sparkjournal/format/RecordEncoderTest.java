package io.sparkjournal.format;

import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.zip.CRC32C;

/** Records {@link RecordEncoder} writes are what {@link RecordScan} reads back. */
public final class RecordEncoderTest {

    private static final long FILE_ID32 = 0x8000_0007L;

    private RecordEncoderTest() {
    }

    public static void testEncodedRecordsScanBackWithEveryField() {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        int second = RecordEncoder.encode(buffer, 0, Layout.ADD, 0, 65535, FILE_ID32, -2L, 0, 0,
                body(13, 1));
        int third = RecordEncoder.encode(buffer, second, Layout.ADD_TX, 0, 4, FILE_ID32, 9, 3, 0,
                body(0, 2));
        int end = RecordEncoder.encode(buffer, third, Layout.COMMIT, 0, 0, FILE_ID32, 0, 3, 1,
                body(0, 0));
        equal(56, second, "end of a record of 13 body bytes");
        equal(96, third, "end of a record of no body after it");
        ScanResult scan = RecordScan.scan(buffer, 0, FILE_ID32, true);
        equal(3, scan.n(), "records found");
        equal(3, scan.nClean(), "clean records");
        equal((long) end, scan.cleanEnd(), "clean end");
        equal(-1L, scan.firstForeign(), "first foreign word");
        equal(Arrays.asList(Layout.ADD, Layout.ADD_TX, Layout.COMMIT),
                Arrays.asList(scan.type(0), scan.type(1), scan.type(2)), "types");
        equal(Arrays.asList(65535, 4, 0),
                Arrays.asList(scan.userType(0), scan.userType(1), scan.userType(2)), "user types");
        equal(Arrays.asList(-2L, 9L, 0L),
                Arrays.asList(scan.recordId(0), scan.recordId(1), scan.recordId(2)), "record ids");
        equal(Arrays.asList(0L, 3L, 3L),
                Arrays.asList(scan.txId(0), scan.txId(1), scan.txId(2)), "tx ids");
        equal(Arrays.asList(0L, 0L, 1L),
                Arrays.asList(scan.count(0), scan.count(1), scan.count(2)), "counts");
        equal(Arrays.asList(0L, 56L, 96L),
                Arrays.asList(scan.offset(0), scan.offset(1), scan.offset(2)), "offsets");
        equal(13, scan.bodyLength(0), "first body length");
    }

    public static void testTheCrcCoversHeaderAndBodyButNotThePadding() {
        ByteBuffer buffer = ByteBuffer.allocate(256);
        ByteBuffer payload = body(13, 5);
        RecordEncoder.encode(buffer, 0, Layout.ADD, 0, 1, FILE_ID32, 1, 0, 0, payload);
        CRC32C crc = new CRC32C();
        crc.update(buffer.slice(Layout.REC_TYPE, Layout.RECORD_HEADER_SIZE - Layout.REC_TYPE + 13));
        equal(crc.getValue(), Integer.toUnsignedLong(
                buffer.duplicate().order(ByteOrder.LITTLE_ENDIAN).getInt(Layout.REC_CRC)),
                "the stored CRC-32C");
        equal(ByteBuffer.wrap(new byte[3]), buffer.slice(53, 3), "the padding");
        buffer.put(54, (byte) 0x5A);
        isTrue(RecordScan.recordCrcOk(buffer, 0, 13), "a changed padding byte broke the CRC");
        buffer.put(45, (byte) (buffer.get(45) ^ 1));
        isTrue(!RecordScan.recordCrcOk(buffer, 0, 13), "a changed body byte kept the CRC");
    }

    public static void testAFlippedBodyByteMakesTheRecordForeignUnlessCrcsAreSkipped() {
        ByteBuffer buffer = ByteBuffer.allocate(256);
        RecordEncoder.encode(buffer, 0, Layout.ADD, 0, 1, FILE_ID32, 1, 0, 0, body(20, 9));
        buffer.put(Layout.RECORD_HEADER_SIZE + 3, (byte) (buffer.get(Layout.RECORD_HEADER_SIZE + 3) ^ 0x10));
        ScanResult checked = RecordScan.scan(buffer, 0, FILE_ID32, true);
        equal(0, checked.nClean(), "clean records with the CRC checked");
        equal(0L, checked.firstForeign(), "first foreign word");
        isTrue(!checked.foreignReason().isEmpty(), "the foreign word has no reason");
        equal(1, RecordScan.scan(buffer, 0, FILE_ID32, false).nClean(),
                "clean records with the CRC skipped");
    }

    public static void testAMisalignedOrOverflowingRecordIsRefusedAndNothingWritten() {
        ByteBuffer buffer = ByteBuffer.allocate(64);
        raises(IllegalArgumentException.class, () -> RecordEncoder.encode(buffer, 4, Layout.ADD, 0,
                0, FILE_ID32, 1, 0, 0, body(1, 1)));
        raises(IllegalArgumentException.class, () -> RecordEncoder.encode(buffer, 16, Layout.ADD, 0,
                0, FILE_ID32, 1, 0, 0, body(9, 1)));
        raises(IllegalArgumentException.class, () -> RecordEncoder.encode(buffer, 0, 10, 0,
                0, FILE_ID32, 1, 0, 0, body(1, 1)));
        raises(IllegalArgumentException.class, () -> RecordEncoder.encode(buffer, 0, Layout.ADD, 2,
                0, FILE_ID32, 1, 0, 0, body(1, 1)));
        raises(IllegalArgumentException.class, () -> RecordEncoder.encode(buffer, 0, Layout.ADD, 0,
                65536, FILE_ID32, 1, 0, 0, body(1, 1)));
        equal(ByteBuffer.allocate(64), buffer, "the buffer after refused records");
    }

    /** {@code length} bytes counting up from {@code seed}. */
    private static ByteBuffer body(int length, int seed) {
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (seed + i);
        }
        return ByteBuffer.wrap(bytes);
    }
}
