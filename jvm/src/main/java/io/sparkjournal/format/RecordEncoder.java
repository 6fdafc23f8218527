package io.sparkjournal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * Encodes one record (FORMAT.md, "Record") into a buffer, the same bytes as
 * every writer of the format (tests/test_jvm_append_agreement.py compares them
 * with the Python writer's). The record is the 40-byte header, the body, and
 * zeros up to the next multiple of 8; its CRC-32C covers bytes 4 .. 40 + body
 * length (the rest of the header and the body, not the padding).
 *
 * <p>Nothing is written unless every argument is valid: a position that is not
 * 8-aligned, a record that does not fit in the buffer, or a field out of its
 * range throws IllegalArgumentException and leaves the buffer as it was.
 */
public final class RecordEncoder {

    private static final long U32_MAX = 0xFFFFFFFFL;

    private RecordEncoder() {
    }

    /**
     * Writes the record at {@code pos} of {@code out} (absolute, from index 0;
     * neither buffer's position, limit or byte order is changed) and returns
     * where the next record may start: {@code pos + Layout.recordSize(body length)}.
     *
     * @param type      1..9 ({@link Layout#ADD} ...)
     * @param flags     0 or {@link Layout#FLAG_LARGE}
     * @param userType  0..65535
     * @param fileId32  the low 32 bits of the id of the file written into
     * @param recordId  u64; 0 for PREPARE/COMMIT/ROLLBACK
     * @param txId      u64; 0 for non-transactional records
     * @param count     u32; the per-file count of PREPARE/COMMIT/ROLLBACK, else 0
     * @param body      its bytes from position to limit
     */
    public static int encode(ByteBuffer out, int pos, int type, int flags, int userType,
                             long fileId32, long recordId, long txId, long count, ByteBuffer body) {
        int bodyLength = body.remaining();
        long size = Layout.recordSize(bodyLength);
        if (pos % Layout.RECORD_ALIGN != 0) {
            throw new IllegalArgumentException("record position " + pos + " is not 8-byte aligned");
        }
        if (pos < 0 || pos + size > out.capacity()) {
            throw new IllegalArgumentException("a record of " + bodyLength + " body bytes does not"
                    + " fit at " + pos + " in a buffer of " + out.capacity() + " bytes");
        }
        if (type < Layout.ADD || type > Layout.TYPE_MAX) {
            throw new IllegalArgumentException("record type " + type + " is not 1..9");
        }
        if ((flags & ~Layout.KNOWN_FLAGS) != 0) {
            throw new IllegalArgumentException("record flags " + flags + " set an unknown bit");
        }
        if (userType < 0 || userType > 0xFFFF) {
            throw new IllegalArgumentException("user record type " + userType + " is not a u16");
        }
        if (fileId32 < 0 || fileId32 > U32_MAX || count < 0 || count > U32_MAX) {
            throw new IllegalArgumentException("file id " + fileId32 + " or count " + count
                    + " is not a u32");
        }
        ByteBuffer b = out.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        b.put(pos + Layout.REC_TYPE, (byte) type);
        b.put(pos + Layout.REC_FLAGS, (byte) flags);
        b.putShort(pos + Layout.REC_USER_TYPE, (short) userType);
        b.putInt(pos + Layout.REC_FILE_ID, (int) fileId32);
        b.putInt(pos + Layout.REC_BODY_LEN, bodyLength);
        b.putLong(pos + Layout.REC_RECORD_ID, recordId);
        b.putLong(pos + Layout.REC_TX_ID, txId);
        b.putInt(pos + Layout.REC_COUNT, (int) count);
        b.putInt(pos + Layout.REC_COMPACT_COUNT, 0);
        int bodyAt = pos + Layout.RECORD_HEADER_SIZE;
        b.put(bodyAt, body, body.position(), bodyLength);
        int end = (int) (pos + size);
        for (int i = bodyAt + bodyLength; i < end; i++) {
            b.put(i, (byte) 0);
        }
        CRC32C crc = new CRC32C();
        crc.update(b.slice(pos + Layout.REC_TYPE, Layout.RECORD_HEADER_SIZE - Layout.REC_TYPE
                + bodyLength));
        b.putInt(pos + Layout.REC_CRC, (int) crc.getValue());
        return end;
    }
}
