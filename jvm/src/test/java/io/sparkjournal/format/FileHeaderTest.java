package io.sparkjournal.format;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/** Headers {@link HeaderEncoder} writes parse back in {@link FileHeader}, which refuses
 *  damaged and newer ones. */
public final class FileHeaderTest {

    private static final HeaderEncoder FIELDS = new HeaderEncoder(7, 0x8000_0000_0000_0011L,
            32768, 4096, 0, 16384, 123_456_789L, 16, 8192, -5L, 42);

    private FileHeaderTest() {
    }

    public static void testAnEncodedHeaderParsesBackWithEveryField() throws Exception {
        FileHeader header = FileHeader.parse(FIELDS.encode(), "f");
        equal(2L, header.formatVersion(), "format version");
        equal(7L, header.userVersion(), "user version");
        equal(0x8000_0000_0000_0011L, header.fileId(), "file id");
        equal(32768L, header.fileSize(), "file size");
        equal(4096L, header.blockSize(), "block size");
        equal(0L, header.sealedEnd(), "sealed end");
        equal(16384L, header.syncWindow(), "sync window");
        equal(123_456_789L, header.createdNs(), "created ns");
        equal(16L, header.prevFileId(), "previous file id");
        equal(8192L, header.prevEnd(), "previous end");
        equal(-5L, header.maxRecordId(), "max record id");
        equal(42L, header.maxTxId(), "max tx id");
        isTrue(!header.isSealed(), "a header of a file appended to reads as sealed");
    }

    public static void testASealedEndIsKeptInEighths() throws Exception {
        HeaderEncoder sealed = new HeaderEncoder(0, 3, 8192, 512, 4200, 0, 1, 0, 0, 0, 0);
        FileHeader header = FileHeader.parse(sealed.encode(), "f");
        equal(4200L, header.sealedEnd(), "sealed end");
        isTrue(header.isSealed(), "a header with a sealed end reads as appended to");
        raises(IllegalArgumentException.class,
                () -> new HeaderEncoder(0, 3, 8192, 512, 4201, 0, 1, 0, 0, 0, 0));
    }

    public static void testAHeaderOfANewerVersionIsRefusedWithFormatVersionException() {
        ByteBuffer raw = FIELDS.encode().order(ByteOrder.LITTLE_ENDIAN);
        raw.putInt(Layout.HDR_VERSION, 3);
        reseal(raw);
        FormatVersionException refused = raises(FormatVersionException.class,
                () -> FileHeader.parse(raw, "lane/0000000000000011.sjd"));
        equal(3L, refused.found(), "version found");
        equal(2L, refused.supported(), "version supported");
        equal("lane/0000000000000011.sjd", refused.path(), "path named");
    }

    public static void testAHeaderWithAChangedByteIsCorrupt() {
        ByteBuffer raw = FIELDS.encode();
        raw.put(Layout.HDR_FILE_SIZE, (byte) (raw.get(Layout.HDR_FILE_SIZE) ^ 1));
        CorruptFileException corrupt = raises(CorruptFileException.class,
                () -> FileHeader.parse(raw, "f"));
        equal("header checksum mismatch", corrupt.detail(), "detail");
        ByteBuffer magic = FIELDS.encode();
        magic.put(0, (byte) 'X');
        reseal(magic);
        contains(raises(CorruptFileException.class, () -> FileHeader.parse(magic, "f")).detail(),
                "SJRNLDAT");
    }

    public static void testReadRefusesAFileWhoseSizeDiffersFromItsHeader() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path file = temp.path().resolve("0000000000000011.sjd");
            Files.write(file, FIELDS.encode().array());
            Files.write(file, new byte[32768 - Layout.FILE_HEADER_SIZE], StandardOpenOption.APPEND);
            equal(32768L, FileHeader.read(file).fileSize(), "file size of the file as made");
            Files.write(file, new byte[8], StandardOpenOption.APPEND);
            CorruptFileException grown = raises(CorruptFileException.class,
                    () -> FileHeader.read(file));
            contains(grown.detail(), "32776", "32768");
            equal(file.toString(), grown.path(), "path named");
        }
    }

    public static void testHeaderEncoderRefusesWhatNoReaderAccepts() {
        raises(IllegalArgumentException.class,
                () -> new HeaderEncoder(0, 1, 10000, 512, 0, 0, 0, 0, 0, 0, 0));
        raises(IllegalArgumentException.class,
                () -> new HeaderEncoder(0, 1, 8192, 8192, 0, 0, 0, 0, 0, 0, 0));
        raises(IllegalArgumentException.class,
                () -> new HeaderEncoder(1L << 32, 1, 8192, 512, 0, 0, 0, 0, 0, 0, 0));
    }

    /** The version 2 header CRC recomputed over the (changed) bytes 0..87. */
    private static void reseal(ByteBuffer raw) {
        CRC32C crc = new CRC32C();
        crc.update(raw.slice(0, Layout.FILE_HEADER_CRC_AT));
        raw.order(ByteOrder.LITTLE_ENDIAN).putInt(Layout.FILE_HEADER_CRC_AT, (int) crc.getValue());
    }
}
