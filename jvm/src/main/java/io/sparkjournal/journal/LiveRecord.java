package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A record as a load sees it (FORMAT.md, "Record"): a live committed
 * record (its ADD with the body of its latest UPDATE), or a record of a
 * prepared transaction as it would be live if it commits.
 *
 * <p>{@link #body()} is zero-copy: a read-only slice of the data file's memory
 * map, or, for a large record, a read-only map of its body file (read, size-
 * and CRC-checked each time it is asked for; see LargeBodies). The bytes stay
 * valid while the snapshot's files are on disk as they were: the lane's
 * file-set lock, which the snapshot holds shared until it is closed
 * (FileSetLock), keeps a compaction's swap and the writer's reclaim away.
 */
public final class LiveRecord {

    private final long recordId;
    private final Version version;
    private final ByteBuffer file;
    private final LargeBodies large;
    private final boolean verify;

    LiveRecord(long recordId, Version version, ByteBuffer file, LargeBodies large,
               boolean verify) {
        this.recordId = recordId;
        this.version = version;
        this.file = file;
        this.large = large;
        this.verify = verify;
    }

    /** The record id (u64, read unsigned). */
    public long recordId() {
        return recordId;
    }

    /** The application's kind of record (u16). */
    public int userType() {
        return version.userType();
    }

    /** The body length in the data file: for a large record, its 24-byte reference. */
    public int bodyLength() {
        return version.bodyLength();
    }

    /** The file id of the data file holding the current version. */
    public long fileId() {
        return version.fileId();
    }

    /** Where that record starts in its data file. */
    public long offset() {
        return version.offset();
    }

    /** True when the body lives in {@code large/}. */
    public boolean isLarge() {
        return version.large();
    }

    /**
     * The body, position 0 to limit, read only (byte order: big-endian, as any
     * new ByteBuffer). For a large record it is read and checked now: a
     * missing, resized or (with checksums on) damaged body throws
     * CorruptJournalException naming the body file.
     */
    public ByteBuffer body() throws IOException {
        ByteBuffer raw = file.slice((int) version.offset() + Layout.RECORD_HEADER_SIZE,
                version.bodyLength()).asReadOnlyBuffer();
        return version.large() ? large.read(raw, verify) : raw;
    }

    @Override
    public String toString() {
        return "LiveRecord(" + Long.toUnsignedString(recordId) + ", user type " + userType()
                + ", " + bodyLength() + " bytes" + (isLarge() ? " large" : "") + ", file "
                + Long.toUnsignedString(fileId()) + " @" + offset() + ")";
    }
}
