package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.Set;
import java.util.zip.CRC32C;

/**
 * Stores the bodies of a lane's large records for its one writer (FORMAT.md,
 * "Large records"; {@link LargeBodies} reads them): a body goes whole into
 * {@code large/<16 hex digits>.body} under a fresh random id, created
 * exclusively (an id already taken draws again), written, fdatasynced, and
 * the folder synced; only then does {@link #store} return the 24-byte
 * reference (id, size, CRC-32C of the body, 0) that the caller appends as the
 * body of a {@code LARGE} record. So a durable reference always names a
 * complete body.
 *
 * <p>Crash behaviour: a crash before the reference is durable leaves a body,
 * complete or short, that no durable record names: an orphan no reader opens
 * (bodies are found only through references), removed by the next load of a
 * writer that removes orphans (Python's); the JVM appender leaves orphans as
 * it leaves reclaiming. A crash while the {@code large} folder is made leaves
 * an empty folder, or none.
 */
final class LargeBodyWriter {

    private static final Set<StandardOpenOption> CREATE = Set.of(StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE);

    private final Path lane;
    private final Path directory;
    private final SecureRandom random = new SecureRandom();
    private boolean folderDurable;

    LargeBodyWriter(Path lane) {
        this.lane = lane;
        this.directory = lane.resolve(LargeBodies.FOLDER);
    }

    /** Stores {@code body} (position to limit; not moved) durably; returns the reference to
     *  append, little-endian, position 0 (see the class). */
    ByteBuffer store(ByteBuffer body) throws IOException {
        makeFolder();
        ByteBuffer bytes = body.duplicate();
        long size = bytes.remaining();
        CRC32C crc = new CRC32C();
        crc.update(bytes.duplicate());
        while (true) {
            long largeId = random.nextLong();
            if (largeId == 0) {
                continue;                       // id 0 names no body
            }
            Path path = directory.resolve(Layout.largeBodyName(largeId));
            FileChannel channel;
            try {
                channel = FileChannel.open(path, CREATE, DiskModes.fileAttribute(path));
            } catch (FileAlreadyExistsException taken) {
                continue;                       // a body (or debris) holds this id: draw again
            }
            try (channel) {
                while (bytes.hasRemaining()) {
                    channel.write(bytes);
                }
                channel.force(false);
            }
            DiskModes.syncFolder(directory);
            ByteBuffer reference = ByteBuffer.allocate(Layout.LARGE_REF_SIZE)
                    .order(ByteOrder.LITTLE_ENDIAN);
            reference.putLong(Layout.LARGE_ID, largeId);
            reference.putLong(Layout.LARGE_BODY_SIZE, size);
            reference.putInt(Layout.LARGE_BODY_CRC, (int) crc.getValue());
            reference.putInt(Layout.LARGE_RESERVED, 0);
            return reference;
        }
    }

    /** The {@code large} folder, made (and the lane synced) the first time; refused when its
     *  real location is outside the lane (a symlink: {@link InsideLane}). */
    private void makeFolder() throws IOException {
        if (folderDurable) {
            return;
        }
        if (!Files.isDirectory(directory)) {
            try {
                Files.createDirectory(directory, DiskModes.folderAttribute(directory));
            } catch (FileAlreadyExistsException raced) {
                // a file or folder of that name: the check below names what it is
            }
        }
        InsideLane.check(lane.toString(), LargeBodies.FOLDER, "the large records folder");
        if (!Files.isDirectory(directory)) {
            throw new JournalException(directory + " is not a folder: a lane's large records"
                    + " live in its folder large/; move that file away to write large records");
        }
        DiskModes.syncFolder(lane);
        folderDurable = true;
    }
}
