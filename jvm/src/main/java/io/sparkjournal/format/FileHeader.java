package io.sparkjournal.format;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * A data file's header (FORMAT.md, "Data file"), version 1 or 2, checked as
 * FORMAT.md's reader requirements state, in this order:
 * <ol>
 *   <li>fewer than 76 bytes, or the magic is not "SJRNLDAT": corrupt;</li>
 *   <li>the CRC-32C is read at 72 for version 1 and at 88 for any other
 *       version (a header shorter than that is corrupt) and must match:
 *       corrupt otherwise;</li>
 *   <li>a version above {@link Layout#FORMAT_VERSION}: {@link FormatVersionException}
 *       (so a newer header is only recognised once its first 92 bytes carry a
 *       valid version 2 style CRC);</li>
 *   <li>version 0, a file size that is not a multiple of 4096, a block size
 *       other than 512/1024/2048/4096, or a sealed end past the file size:
 *       corrupt;</li>
 *   <li>{@link #read} only: a file whose size on disk differs from the
 *       header's file size: corrupt.</li>
 * </ol>
 * Version 1 headers have no id watermark: {@link #maxRecordId} and
 * {@link #maxTxId} are 0. u64 fields are returned as {@code long}s to be read
 * unsigned; u32 fields as non-negative {@code long}s.
 */
public final class FileHeader {

    private static final int MIN_HEADER = Layout.FILE_HEADER_V1_CRC_AT + 4;

    private final long formatVersion;
    private final long userVersion;
    private final long fileId;
    private final long fileSize;
    private final long blockSize;
    private final long sealedEnd;
    private final long syncWindow;
    private final long createdNs;
    private final long prevFileId;
    private final long prevEnd;
    private final long maxRecordId;
    private final long maxTxId;

    private FileHeader(ByteBuffer b, long version) {
        formatVersion = version;
        userVersion = u32(b, Layout.HDR_USER_VERSION);
        fileId = b.getLong(Layout.HDR_FILE_ID);
        fileSize = b.getLong(Layout.HDR_FILE_SIZE);
        blockSize = u32(b, Layout.HDR_BLOCK_SIZE);
        sealedEnd = u32(b, Layout.HDR_SEALED_END_8) * Layout.RECORD_ALIGN;
        syncWindow = b.getLong(Layout.HDR_SYNC_WINDOW);
        createdNs = b.getLong(Layout.HDR_CREATED_NS);
        prevFileId = b.getLong(Layout.HDR_PREV_FILE_ID);
        prevEnd = b.getLong(Layout.HDR_PREV_END);
        maxRecordId = version >= 2 ? b.getLong(Layout.HDR_MAX_RECORD_ID) : 0;
        maxTxId = version >= 2 ? b.getLong(Layout.HDR_MAX_TX_ID) : 0;
    }

    /**
     * Parses the header at the start of {@code raw} (its bytes from position to
     * limit; the buffer itself is not moved). {@code path} only names the file
     * in error messages. Does not check the file's size on disk.
     */
    public static FileHeader parse(ByteBuffer raw, String path)
            throws CorruptFileException, FormatVersionException {
        ByteBuffer b = raw.slice().order(ByteOrder.LITTLE_ENDIAN);
        int n = b.remaining();
        if (n < MIN_HEADER) {
            throw new CorruptFileException(path, n + " bytes, shorter than a header");
        }
        for (int i = 0; i < Layout.FILE_MAGIC.length; i++) {
            if (b.get(Layout.HDR_MAGIC + i) != Layout.FILE_MAGIC[i]) {
                throw new CorruptFileException(path, "magic " + hex(b, 0, 8) + " is not "
                        + hex(ByteBuffer.wrap(Layout.FILE_MAGIC), 0, 8) + " (" + Constants.Format.FILE_MAGIC + ")");
            }
        }
        long version = u32(b, Layout.HDR_VERSION);
        int crcAt = version == 1 ? Layout.FILE_HEADER_V1_CRC_AT : Layout.FILE_HEADER_CRC_AT;
        if (n < crcAt + 4) {
            throw new CorruptFileException(path, n + " bytes, shorter than a version "
                    + version + " header");
        }
        CRC32C crc = new CRC32C();
        crc.update(b.slice(0, crcAt));
        if (crc.getValue() != u32(b, crcAt)) {
            throw new CorruptFileException(path, "header checksum mismatch");
        }
        if (version > Layout.FORMAT_VERSION) {
            throw new FormatVersionException("data file", path, version,
                    Layout.FORMAT_VERSION);
        }
        FileHeader header = new FileHeader(b, version);
        long block = header.blockSize;
        if (version < 1 || Long.remainderUnsigned(header.fileSize, Layout.FILE_SIZE_MULTIPLE) != 0
                || (block != 512 && block != 1024 && block != 2048 && block != 4096)) {
            throw new CorruptFileException(path, "implausible header (version " + version + ", size "
                    + Long.toUnsignedString(header.fileSize) + ", block " + block + ")");
        }
        if (Long.compareUnsigned(header.sealedEnd, header.fileSize) > 0) {
            throw new CorruptFileException(path, "sealed end " + header.sealedEnd
                    + " lies past the file size " + Long.toUnsignedString(header.fileSize));
        }
        return header;
    }

    /**
     * Reads and parses the header of the data file at {@code path}, and checks
     * that the file is exactly the header's file size (a file cut short or grown
     * is corrupt). Messages name the file as {@code path.toString()}.
     */
    public static FileHeader read(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            ByteBuffer raw = ByteBuffer.allocate(Layout.FILE_HEADER_SIZE);
            while (raw.hasRemaining() && channel.read(raw) >= 0) {
                // read until the block is full or the file ends
            }
            raw.flip();
            FileHeader header = parse(raw, path.toString());
            long actual = channel.size();
            if (actual != header.fileSize) {
                throw new CorruptFileException(path.toString(), "file is " + actual
                        + " bytes, its header says " + Long.toUnsignedString(header.fileSize));
            }
            return header;
        }
    }

    private static long u32(ByteBuffer b, int at) {
        return Integer.toUnsignedLong(b.getInt(at));
    }

    private static String hex(ByteBuffer b, int from, int length) {
        StringBuilder out = new StringBuilder(2 * length);
        for (int i = from; i < from + length; i++) {
            out.append(String.format("%02x", b.get(i)));
        }
        return out.toString();
    }

    /** 1 or 2. */
    public long formatVersion() { return formatVersion; }
    /** The application's version, carried, not interpreted (u32). */
    public long userVersion() { return userVersion; }
    /** Unique and increasing in the lane (u64); records carry its low 32 bits. */
    public long fileId() { return fileId; }
    /** The size the file was created with (u64). */
    public long fileSize() { return fileSize; }
    /** The write alignment the writer used. */
    public long blockSize() { return blockSize; }
    /** Where the data of a file written whole by compaction ends; 0 for a file appended to. */
    public long sealedEnd() { return sealedEnd; }
    /** Most bytes the writer may have written past its last completed sync (u64). */
    public long syncWindow() { return syncWindow; }
    /** Creation time, ns since the epoch; informational (u64). */
    public long createdNs() { return createdNs; }
    /** The file the writer sealed before its first write here; 0 if none (u64). */
    public long prevFileId() { return prevFileId; }
    /** Where that previous file's data ends; 0 if none (u64). */
    public long prevEnd() { return prevEnd; }
    /** Highest record id handed out before this file's first record; 0 in version 1 (u64). */
    public long maxRecordId() { return maxRecordId; }
    /** Highest tx id handed out before this file's first record; 0 in version 1 (u64). */
    public long maxTxId() { return maxTxId; }

    /** True for a file written whole by compaction, never appended to. */
    public boolean isSealed() { return sealedEnd != 0; }
}
