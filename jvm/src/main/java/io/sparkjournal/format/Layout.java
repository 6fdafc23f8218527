package io.sparkjournal.format;

import java.nio.charset.StandardCharsets;

/**
 * The numbers of sparkjournal/format/FORMAT.md, the one description of the
 * on-disk bytes, for the JVM. The shared ones (version, magic, sizes, record
 * types, flags) come from their one declaration, sparkjournal/format/constants.json,
 * through the generated {@link Constants} (FORMAT.md, "Constants"), as every
 * implementation takes them. The field offsets are this side's, from
 * FORMAT.md's tables. tests/test_jvm_format_agreement.py proves that this
 * side reads the bytes exactly as the others do.
 *
 * <p>Every integer on disk is little-endian. Every checksum is CRC-32C
 * (Castagnoli; {@link java.util.zip.CRC32C} computes the same value: the check
 * value of "123456789" is 0xE3069283). Unsigned fields are held in the next
 * wider Java type, or, for u64 fields, in a {@code long} read as unsigned.
 */
public final class Layout {

    private Layout() {
    }

    // ---- data file header ---------------------------------------------------

    /** The newest header version this code reads; versions 1 and 2 are read. */
    public static final int FORMAT_VERSION = Constants.Format.FORMAT_VERSION;

    /** The first eight bytes of every data file: "SJRNLDAT" in ASCII. */
    public static final byte[] FILE_MAGIC = Constants.Format.FILE_MAGIC.getBytes(StandardCharsets.US_ASCII);

    /** The header block; the first record starts right after it. */
    public static final int FILE_HEADER_SIZE = Constants.Format.FILE_HEADER_SIZE;

    /** A data file's size is a multiple of this. */
    public static final int FILE_SIZE_MULTIPLE = Constants.Format.FILE_SIZE_MULTIPLE;

    /** Version 2: the CRC-32C of header bytes 0..87 is stored at 88. */
    public static final int FILE_HEADER_CRC_AT = Constants.Format.FILE_HEADER_CRC_AT;

    /** Version 1 (no id watermark): the CRC-32C of bytes 0..71 is stored at 72. */
    public static final int FILE_HEADER_V1_CRC_AT = Constants.Format.FILE_HEADER_V1_CRC_AT;

    /** Header field offsets (both versions up to 72; the watermark is v2 only). */
    public static final int HDR_MAGIC = 0;
    public static final int HDR_VERSION = 8;            // u32
    public static final int HDR_USER_VERSION = 12;      // u32, the application's, carried
    public static final int HDR_FILE_ID = 16;           // u64
    public static final int HDR_FILE_SIZE = 24;         // u64
    public static final int HDR_BLOCK_SIZE = 32;        // u32
    public static final int HDR_SEALED_END_8 = 36;      // u32: sealed end / 8, 0 if appended to
    public static final int HDR_SYNC_WINDOW = 40;       // u64
    public static final int HDR_CREATED_NS = 48;        // u64, informational
    public static final int HDR_PREV_FILE_ID = 56;      // u64
    public static final int HDR_PREV_END = 64;          // u64
    public static final int HDR_MAX_RECORD_ID = 72;     // u64, version 2 only
    public static final int HDR_MAX_TX_ID = 80;         // u64, version 2 only

    // ---- record -------------------------------------------------------------

    /** Every record starts with a header of this many bytes; its body follows. */
    public static final int RECORD_HEADER_SIZE = Constants.Format.RECORD_HEADER_SIZE;

    /** Records start at offsets that are multiples of this (from the buffer's start). */
    public static final int RECORD_ALIGN = Constants.Format.RECORD_ALIGN;

    /** Record header field offsets. */
    public static final int REC_CRC = 0;             // u32: CRC-32C of bytes 4 .. 40 + body length
    public static final int REC_TYPE = 4;            // u8, 1..9; 0 never begins a record
    public static final int REC_FLAGS = 5;           // u8, only FLAG_LARGE may be set
    public static final int REC_USER_TYPE = 6;       // u16
    public static final int REC_FILE_ID = 8;         // u32: low 32 bits of the file's id
    public static final int REC_BODY_LEN = 12;       // u32
    public static final int REC_RECORD_ID = 16;      // u64, 0 for PREPARE/COMMIT/ROLLBACK
    public static final int REC_TX_ID = 24;          // u64, 0 for non-transactional records
    public static final int REC_COUNT = 32;          // u32, PREPARE/COMMIT/ROLLBACK only
    public static final int REC_COMPACT_COUNT = 36;  // u32, reserved, 0

    /** Record types. */
    public static final int ADD = Constants.RecordTypes.ADD;
    public static final int UPDATE = Constants.RecordTypes.UPDATE;
    public static final int DELETE = Constants.RecordTypes.DELETE;
    public static final int ADD_TX = Constants.RecordTypes.ADD_TX;
    public static final int UPDATE_TX = Constants.RecordTypes.UPDATE_TX;
    public static final int DELETE_TX = Constants.RecordTypes.DELETE_TX;
    public static final int PREPARE = Constants.RecordTypes.PREPARE;
    public static final int COMMIT = Constants.RecordTypes.COMMIT;
    public static final int ROLLBACK = Constants.RecordTypes.ROLLBACK;
    /** The highest valid type; a type above it (or 0) is not a record. */
    public static final int TYPE_MAX = ROLLBACK;

    /** Flag bit 0: the body is a 24-byte large reference, not the payload. */
    public static final int FLAG_LARGE = Constants.RecordFlags.FLAG_LARGE;
    /** Every flag bit this version knows; a record with any other bit set is not valid. */
    public static final int KNOWN_FLAGS = FLAG_LARGE;

    // ---- large record reference (the body of a FLAG_LARGE record) ------------

    public static final int LARGE_REF_SIZE = Constants.Format.LARGE_REF_SIZE;
    public static final int LARGE_ID = 0;          // u64, names large/<16 hex digits>.body
    public static final int LARGE_BODY_SIZE = 8;   // u64, the real body's size
    public static final int LARGE_BODY_CRC = 16;   // u32, CRC-32C of the real body
    public static final int LARGE_RESERVED = 20;   // u32, 0

    /** The name of a type code, or "TYPE_n" for a code outside 1..9. */
    public static String typeName(int type) {
        switch (type) {
            case ADD: return "ADD";
            case UPDATE: return "UPDATE";
            case DELETE: return "DELETE";
            case ADD_TX: return "ADD_TX";
            case UPDATE_TX: return "UPDATE_TX";
            case DELETE_TX: return "DELETE_TX";
            case PREPARE: return "PREPARE";
            case COMMIT: return "COMMIT";
            case ROLLBACK: return "ROLLBACK";
            default: return "TYPE_" + type;
        }
    }

    /** Bytes a record with a body of {@code bodyLength} bytes occupies, padding included. */
    public static long recordSize(long bodyLength) {
        return (RECORD_HEADER_SIZE + bodyLength + RECORD_ALIGN - 1) & -(long) RECORD_ALIGN;
    }

    /** The file id as records carry it: its low 32 bits, as an unsigned value. */
    public static long fileId32(long fileId) {
        return fileId & 0xFFFFFFFFL;
    }

    /** The large body file's name for a large id: 16 lower-case hex digits + ".body". */
    public static String largeBodyName(long largeId) {
        return String.format("%016x.body", largeId);
    }
}
