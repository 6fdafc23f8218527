package io.sparkjournal.format;

import static io.sparkjournal.Expect.equal;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/** The numbers of FORMAT.md as {@link Layout} states them. */
public final class LayoutTest {

    private LayoutTest() {
    }

    public static void testCrc32cCheckValueIs0xE3069283() {
        CRC32C crc = new CRC32C();
        crc.update("123456789".getBytes(StandardCharsets.US_ASCII));
        equal(0xE3069283L, crc.getValue(), "CRC-32C of \"123456789\"");
    }

    public static void testRecordSizeIsTheHeaderAndBodyRoundedUpTo8() {
        equal(40L, Layout.recordSize(0), "record of an empty body");
        equal(48L, Layout.recordSize(1), "record of 1 body byte");
        equal(48L, Layout.recordSize(8), "record of 8 body bytes");
        equal(56L, Layout.recordSize(9), "record of 9 body bytes");
        equal(40L + 4096L, Layout.recordSize(4096), "record of 4096 body bytes");
        equal(4_294_967_336L, Layout.recordSize(0xFFFFFFFFL), "record of a u32-max body");
    }

    public static void testFileId32IsTheLow32BitsUnsigned() {
        equal(5L, Layout.fileId32(0x1_0000_0005L), "file id 2^32 + 5");
        equal(0xFFFFFFFFL, Layout.fileId32(-1L), "file id 2^64 - 1");
        equal(0L, Layout.fileId32(1L << 40), "file id 2^40");
    }

    public static void testLargeBodyNamesAre16LowerCaseHexDigits() {
        equal("00000000000000ab.body", Layout.largeBodyName(0xABL), "large id 0xab");
        equal("ffffffffffffffff.body", Layout.largeBodyName(-1L), "large id 2^64 - 1");
    }

    public static void testTypeNamesNameTheNineTypesAndNumberTheRest() {
        equal("ADD", Layout.typeName(Layout.ADD), "type 1");
        equal("ROLLBACK", Layout.typeName(Layout.ROLLBACK), "type 9");
        equal("TYPE_0", Layout.typeName(0), "type 0");
        equal("TYPE_10", Layout.typeName(10), "type 10");
    }
}
