package io.sparkjournal.format;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Instant;
import java.util.zip.CRC32C;

/**
 * The fields of a data file header to write, and their encoding (FORMAT.md,
 * "Data file"). Always
 * the current format version (2): the 88 bytes of fields, their CRC-32C at
 * 88, zeros to 4096. {@link FileHeader#parse} reads the block back.
 *
 * <p>{@code createdNs} 0 stands for "now": the encoding then takes the current
 * time (the field is informational, FORMAT.md, "Data file").
 *
 * @param userVersion  the application's version (u32), carried
 * @param fileId       unique and increasing in the lane (u64)
 * @param fileSize     the size the file is created with (a multiple of 4096)
 * @param blockSize    the write alignment the writer uses (512/1024/2048/4096)
 * @param sealedEnd    where the data of a file written whole ends; 0 for a file appended to
 * @param syncWindow   most bytes the writer may have written past its last completed sync
 * @param createdNs    ns since the epoch, informational; 0: now
 * @param prevFileId   the file sealed before the first write here; 0 if none
 * @param prevEnd      where that file's data ends; 0 if none
 * @param maxRecordId  the highest record id handed out before this file's first record
 * @param maxTxId      the highest tx id handed out before it
 */
public record HeaderEncoder(long userVersion, long fileId, long fileSize, long blockSize,
                            long sealedEnd, long syncWindow, long createdNs, long prevFileId,
                            long prevEnd, long maxRecordId, long maxTxId) {

    public HeaderEncoder {
        if (userVersion < 0 || userVersion > 0xFFFFFFFFL) {
            throw new IllegalArgumentException("user version " + userVersion + " is not a u32");
        }
        if (fileSize <= 0 || fileSize % Layout.FILE_SIZE_MULTIPLE != 0) {
            throw new IllegalArgumentException("file size " + fileSize + " is not a positive"
                    + " multiple of " + Layout.FILE_SIZE_MULTIPLE);
        }
        if (blockSize != 512 && blockSize != 1024 && blockSize != 2048 && blockSize != 4096) {
            throw new IllegalArgumentException("block size " + blockSize + " is not 512, 1024,"
                    + " 2048 or 4096");
        }
        if (sealedEnd < 0 || sealedEnd % Layout.RECORD_ALIGN != 0 || sealedEnd > fileSize) {
            throw new IllegalArgumentException("sealed end " + sealedEnd + " is not a multiple"
                    + " of 8 within the file");
        }
    }

    /** A header for a file a writer appends to (no sealed end), created now. */
    public static HeaderEncoder forAppending(long userVersion, long fileId, long fileSize,
                                             long blockSize, long syncWindow, long prevFileId,
                                             long prevEnd, long maxRecordId, long maxTxId) {
        return new HeaderEncoder(userVersion, fileId, fileSize, blockSize, 0, syncWindow, 0,
                prevFileId, prevEnd, maxRecordId, maxTxId);
    }

    /** The 4096-byte header block, position 0, limit 4096 (a new heap buffer). */
    public ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(Layout.FILE_HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.put(Layout.HDR_MAGIC, Layout.FILE_MAGIC);
        b.putInt(Layout.HDR_VERSION, Layout.FORMAT_VERSION);
        b.putInt(Layout.HDR_USER_VERSION, (int) userVersion);
        b.putLong(Layout.HDR_FILE_ID, fileId);
        b.putLong(Layout.HDR_FILE_SIZE, fileSize);
        b.putInt(Layout.HDR_BLOCK_SIZE, (int) blockSize);
        b.putInt(Layout.HDR_SEALED_END_8, (int) (sealedEnd / Layout.RECORD_ALIGN));
        b.putLong(Layout.HDR_SYNC_WINDOW, syncWindow);
        b.putLong(Layout.HDR_CREATED_NS, createdNs != 0 ? createdNs : nowNs());
        b.putLong(Layout.HDR_PREV_FILE_ID, prevFileId);
        b.putLong(Layout.HDR_PREV_END, prevEnd);
        b.putLong(Layout.HDR_MAX_RECORD_ID, maxRecordId);
        b.putLong(Layout.HDR_MAX_TX_ID, maxTxId);
        CRC32C crc = new CRC32C();
        crc.update(b.slice(0, Layout.FILE_HEADER_CRC_AT));
        b.putInt(Layout.FILE_HEADER_CRC_AT, (int) crc.getValue());
        return b;
    }

    private static long nowNs() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }
}
