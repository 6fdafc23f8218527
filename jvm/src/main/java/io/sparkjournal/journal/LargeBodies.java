package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * The bodies of a lane's large records, read only (FORMAT.md, "Large
 * records"). A LARGE record's body is a 24-byte
 * reference (large id, body size, CRC-32C of the body); the body is the whole
 * of {@code large/<16 hex digits>.body}. A durable reference always names a
 * complete body, so each of these is damage, thrown as CorruptJournalException
 * at offset 0 when the body is read (never at load):
 * <ul>
 *   <li>a reference that is not 24 bytes (names the {@code large} folder);</li>
 *   <li>the body file is missing, or of another size than the reference says
 *       (names the body file);</li>
 *   <li>its CRC-32C differs, when checked (names the body file).</li>
 * </ul>
 * A body is returned as a read-only memory map of its file (at most 2 GiB - 1
 * bytes: a bigger one throws JournalException).
 */
public final class LargeBodies {

    /** The folder of the bodies, in the lane. */
    public static final String FOLDER = "large";
    /** A body file's suffix. */
    public static final String SUFFIX = ".body";

    private final Path lane;
    private final Path directory;

    LargeBodies(Path lane) {
        this.lane = lane;
        this.directory = lane.resolve(FOLDER);
    }

    /** The body file of {@code largeId}. */
    public Path path(long largeId) {
        return directory.resolve(Layout.largeBodyName(largeId));
    }

    /**
     * The body that {@code reference} (the record's body, position to limit)
     * names, checking its CRC-32C when {@code verify} (see the class).
     */
    public ByteBuffer read(ByteBuffer reference, boolean verify) throws IOException {
        if (reference.remaining() != Layout.LARGE_REF_SIZE) {
            throw new CorruptJournalException(directory.toString(), 0, "a large record's"
                    + " reference is " + reference.remaining() + " bytes, not "
                    + Layout.LARGE_REF_SIZE);
        }
        ByteBuffer ref = reference.slice().order(ByteOrder.LITTLE_ENDIAN);
        long largeId = ref.getLong(Layout.LARGE_ID);
        long size = ref.getLong(Layout.LARGE_BODY_SIZE);
        long crc = Integer.toUnsignedLong(ref.getInt(Layout.LARGE_BODY_CRC));
        Path path = path(largeId);
        ByteBuffer body;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long actual = channel.size();
            if (actual != size) {
                throw new CorruptJournalException(path.toString(), 0, "large body is " + actual
                        + " bytes, its record says " + Long.toUnsignedString(size));
            }
            if (size > Integer.MAX_VALUE) {
                throw new JournalException("large body " + path + " is " + size + " bytes: one"
                        + " Java ByteBuffer holds at most 2 GiB - 1; this reader cannot hand it"
                        + " out whole");
            }
            body = channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
        } catch (NoSuchFileException missing) {
            throw new CorruptJournalException(path.toString(), 0, "the large body of "
                    + Long.toUnsignedString(size) + " bytes a record refers to is missing"
                    + " (removed by something other than sparkjournal)");
        }
        if (verify) {
            CRC32C check = new CRC32C();
            check.update(body.duplicate());
            if (check.getValue() != crc) {
                throw new CorruptJournalException(path.toString(), 0,
                        "large body checksum mismatch");
            }
        }
        return body;
    }

    /**
     * Refuses a {@code large} folder whose real location is not inside the
     * lane ({@link InsideLane}: *outside*, FORMAT.md, "A journal (lane)
     * directory"), checked when a snapshot is made.
     */
    void checkInside() throws IOException {
        InsideLane.check(lane.toString(), FOLDER, "the large records folder");
    }
}
