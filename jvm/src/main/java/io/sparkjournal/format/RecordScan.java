package io.sparkjournal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.util.zip.CRC32C;

/**
 * Finds the records of one data file (FORMAT.md, "Reading: where data ends"):
 * the same scan every implementation of the format runs (the Python codec's
 * and the C core's sj_scan included). For the same bytes and arguments each
 * returns the same records and the same n, n_clean, clean_end, first_foreign,
 * foreign_reason and scan_end; tests/test_jvm_format_agreement.py holds the
 * JVM's to that.
 *
 * <p>The rules, all offsets from the start of the buffer:
 * <ul>
 *   <li>scanning starts at {@code start} rounded up to 8 and looks only at
 *       8-aligned words below {@code scan_end} = length rounded down to 8; a
 *       record's header and body may still reach into the last, partial word;</li>
 *   <li>while the data is clean, every non-zero word is checked. It is a valid
 *       record of this file when, in this order: 40 header bytes fit in the
 *       buffer, its type is 1..9, no unknown flag bit is set, the body fits in
 *       the buffer, the CRC-32C matches (only if {@code verifyCrc}) and its
 *       file id is {@code fileId32}. The first word that fails is
 *       {@code first_foreign}; the first failed test names the reason;</li>
 *   <li>a valid record is taken whole: scanning goes on after its padding;</li>
 *   <li>after the first foreign word, the scan looks on for valid records of
 *       this file id only: an 8-aligned offset is a candidate when its file
 *       id field (the four bytes 8 on) holds {@code fileId32} (any non-zero
 *       word when {@code fileId32} is 0); each candidate is checked as above
 *       and, when valid, taken whole; otherwise the search goes on 8 bytes
 *       further. Records found there count in n, not in n_clean, and never
 *       move clean_end.</li>
 * </ul>
 * The scan never reads outside the buffer and allocates nothing sized by a
 * length read from it. A ByteBuffer holds at most 2 GiB - 1 bytes, while a
 * data file may be up to 4 GiB - 4 KiB (fileSize): scanning such a file needs
 * more than this class (a scan of a part of it is not a scan of the file).
 */
public final class RecordScan {

    /** The after-damage prefilter's verdict; never reported (first_foreign is already set). */
    private static final String OTHER_FILE_ID = "other file id";

    private RecordScan() {
    }

    /**
     * Scans {@code buffer}'s bytes from its position to its limit (offsets in
     * the result count from its position; the buffer itself is not moved; its
     * byte order does not matter). {@code start} >= 0 is where to begin, need
     * not be 8-aligned and may lie past the end; {@code fileId32} is the low
     * 32 bits of the file's id (0 .. 2^32 - 1); {@code verifyCrc} false skips
     * the CRC test (a valid record then only needs the rest).
     */
    public static ScanResult scan(ByteBuffer buffer, long start, long fileId32, boolean verifyCrc) {
        if (start < 0) {
            throw new IllegalArgumentException("scan start " + start + " is negative");
        }
        if (fileId32 < 0 || fileId32 > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("file id " + fileId32 + " is not a u32");
        }
        ByteBuffer b = buffer.slice().order(ByteOrder.LITTLE_ENDIAN);
        int length = b.limit();
        long end = length & -(long) Layout.RECORD_ALIGN;
        int fileId = (int) fileId32;
        CRC32C crc = verifyCrc ? new CRC32C() : null;
        ScanResult result = new ScanResult(start);
        long pos = start >= end ? end : alignUp(start);
        while (true) {
            boolean clean = !result.damaged();
            pos = clean ? nextNonzeroWord(b, pos, end) : nextCandidate(b, pos, end, length, fileId);
            if (pos >= end) {
                break;
            }
            int at = (int) pos;
            String why = check(b, length, at, fileId, crc, clean);
            if (why != null) {
                if (clean) {
                    result.setFirstForeign(pos, why);
                }
                pos += Layout.RECORD_ALIGN;
                continue;
            }
            int bodyLength = b.getInt(at + Layout.REC_BODY_LEN);
            result.add(Byte.toUnsignedInt(b.get(at + Layout.REC_TYPE)),
                    Byte.toUnsignedInt(b.get(at + Layout.REC_FLAGS)),
                    Short.toUnsignedInt(b.getShort(at + Layout.REC_USER_TYPE)),
                    bodyLength, b.getInt(at + Layout.REC_COUNT),
                    b.getLong(at + Layout.REC_RECORD_ID), b.getLong(at + Layout.REC_TX_ID), pos);
            pos += Layout.recordSize(bodyLength);
            if (clean) {
                result.setCleanEnd(pos);
            }
        }
        result.finish(end);
        return result;
    }

    /**
     * True when the record at {@code offset} of {@code buffer} (counted from its
     * position; a scan found it, with {@code bodyLength} bytes of body) carries
     * the CRC-32C of its bytes 4 .. 40 + bodyLength. For a scan run without the
     * CRC test, before its body is trusted.
     */
    public static boolean recordCrcOk(ByteBuffer buffer, long offset, int bodyLength) {
        ByteBuffer b = buffer.slice().order(ByteOrder.LITTLE_ENDIAN);
        CRC32C crc = new CRC32C();
        return crcMatches(b, (int) offset, bodyLength, crc);
    }

    /** null for a valid record of this file at {@code at}, else why not (see the class). */
    private static String check(ByteBuffer b, int length, int at, int fileId, CRC32C crc,
                                boolean wantReason) {
        if (length - at < Layout.RECORD_HEADER_SIZE) {
            return "header cut off by end of file";
        }
        int type = Byte.toUnsignedInt(b.get(at + Layout.REC_TYPE));
        if (type == 0 || type > Layout.TYPE_MAX) {
            return "bad type " + type;
        }
        int flags = Byte.toUnsignedInt(b.get(at + Layout.REC_FLAGS));
        if ((flags & ~Layout.KNOWN_FLAGS) != 0) {
            return "bad flags 0x" + (flags < 0x10 ? "0" : "") + Integer.toHexString(flags);
        }
        long bodyLength = Integer.toUnsignedLong(b.getInt(at + Layout.REC_BODY_LEN));
        if (bodyLength > (long) length - at - Layout.RECORD_HEADER_SIZE) {
            return "body length " + bodyLength + " past end of file";
        }
        int recordFileId = b.getInt(at + Layout.REC_FILE_ID);
        if (!wantReason && recordFileId != fileId) {
            return OTHER_FILE_ID;
        }
        if (crc != null && !crcMatches(b, at, (int) bodyLength, crc)) {
            return "crc mismatch";
        }
        if (recordFileId != fileId) {
            return "record of file id " + Integer.toUnsignedString(recordFileId) + " (stale)";
        }
        return null;
    }

    /** The record CRC covers everything after the CRC field up to the end of the body. */
    private static boolean crcMatches(ByteBuffer b, int at, int bodyLength, CRC32C crc) {
        crc.reset();
        crc.update(b.slice(at + 4, Layout.RECORD_HEADER_SIZE - 4 + bodyLength));
        return crc.getValue() == Integer.toUnsignedLong(b.getInt(at + Layout.REC_CRC));
    }

    /** Words looked at one by one before a search turns to bulk copies. */
    private static final int NEAR_WORDS = 16;
    /** Words of the first bulk copy out of the mapped file, doubled at each next one up to
     *  CHUNK_WORDS: scanning an array beats per-word buffer reads, and most searches (a padding
     *  gap to the next block) end within the first copy. */
    private static final int FIRST_CHUNK_WORDS = 512;
    private static final int CHUNK_WORDS = 8192;

    /** First 8-aligned offset >= pos whose 8 bytes are not all zero; end if none. */
    private static long nextNonzeroWord(ByteBuffer b, long pos, long end) {
        long near = Math.min(end, pos + NEAR_WORDS * 8L);
        for (long at = pos; at < near; at += Layout.RECORD_ALIGN) {
            if (b.getLong((int) at) != 0) {
                return at;
            }
        }
        return firstWord(b, (int) (near / 8), (int) (end / 8), true, 0, end);
    }

    /**
     * After damage: the first 8-aligned offset >= pos whose file id field (its
     * bytes 8..11, which may lie past end but not past length) holds this file's
     * id; end if none. With file id 0 every non-zero word is a candidate. The
     * field of the candidate at {@code at} is the low half of the little-endian
     * word at {@code at + 8}, so whole words are searched in bulk; a last
     * candidate whose field has only 4 bytes left in the buffer is checked alone.
     */
    private static long nextCandidate(ByteBuffer b, long pos, long end, int length, int fileId) {
        if (fileId == 0) {
            return nextNonzeroWord(b, pos, end);
        }
        int whole = length / 8;
        long found = firstWord(b, (int) ((pos + Layout.REC_FILE_ID) / 8), whole, false, fileId, -1);
        if (found >= 0) {
            return found - Layout.REC_FILE_ID;
        }
        long at = (long) whole * 8 - Layout.REC_FILE_ID;
        if (at >= pos && at + Layout.REC_FILE_ID + 4 <= length
                && b.getInt((int) at + Layout.REC_FILE_ID) == fileId) {
            return at;
        }
        return end;
    }

    /**
     * Offset of the first 8-byte word among words {@code [from, to)} of
     * {@code b} that is not zero ({@code nonzero}) or whose low half is
     * {@code fileId}; {@code none} if there is none. Words are copied out in
     * bulk, FIRST_CHUNK_WORDS first, then twice as many each time.
     */
    private static long firstWord(ByteBuffer b, int from, int to, boolean nonzero, int fileId, long none) {
        LongBuffer words = b.asLongBuffer();
        long[] chunk = new long[Math.min(FIRST_CHUNK_WORDS, Math.max(0, to - from))];
        for (int w = from; w < to; ) {
            int n = Math.min(chunk.length, to - w);
            words.get(w, chunk, 0, n);
            for (int i = 0; i < n; i++) {
                if (nonzero ? chunk[i] != 0 : (int) chunk[i] == fileId) {
                    return (long) (w + i) * 8;
                }
            }
            w += n;
            chunk = grown(chunk, to - w);
        }
        return none;
    }

    /** The next bulk copy's array: twice {@code chunk}, up to CHUNK_WORDS and the words left. */
    private static long[] grown(long[] chunk, int left) {
        int size = Math.min(Math.min(CHUNK_WORDS, chunk.length * 2), Math.max(left, 0));
        return size > chunk.length ? new long[size] : chunk;
    }

    private static long alignUp(long value) {
        return (value + Layout.RECORD_ALIGN - 1) & -(long) Layout.RECORD_ALIGN;
    }
}
