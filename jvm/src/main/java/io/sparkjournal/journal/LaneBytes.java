package io.sparkjournal.journal;

import io.sparkjournal.format.CorruptFileException;
import io.sparkjournal.format.FileHeader;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * How much of the disk a lane, and a node root's lanes together, hold: what
 * {@code maxSizeBytes} and {@code maxRootSizeBytes} limit (the options'
 * declaration in config.py; Python counts the same in
 * maintenance/lane_size.py). A lane holds its data files that hold data
 * (whole files: a data file is made at its full size) plus its large bodies.
 * Not counted: free files kept for reuse, compaction's files in flight, the
 * archive, the attic, page files and the lane's small bookkeeping files.
 *
 * <p>A data file holds data when it is sealed past its header, or when its
 * first record carries the file's own id (FORMAT.md, "Reuse": a freed file
 * keeps its old records under a new id; a new one is zeros). A file whose
 * header cannot be read is counted whole: it is on disk until a writer moves
 * it to the attic.
 *
 * <p>Read without any lock, beside a writer and a compaction: a file removed
 * while it is measured counts as gone. One stat and one read of a header and
 * a record header per data file.
 */
public final class LaneBytes {

    private LaneBytes() {
    }

    /** Bytes of {@code lane}'s data files holding data plus its large bodies (see the class);
     *  0 for a lane that does not exist. */
    public static long lane(Path lane) throws IOException {
        long total = 0;
        for (Path file : entries(lane)) {
            String name = file.getFileName().toString();
            if (LaneFiles.isDataFileName(name)) {
                total += dataBytes(file);
            }
        }
        for (Path body : entries(lane.resolve(LargeBodies.FOLDER))) {
            if (body.getFileName().toString().endsWith(LargeBodies.SUFFIX)) {
                total += sizeOf(body);
            }
        }
        return total;
    }

    /** Bytes of every lane ({@code lane-NNN} folders) of node root {@code root} together. */
    public static long root(Path root) throws IOException {
        long total = 0;
        for (Path lane : entries(root)) {
            if (LaneFiles.LANE_FOLDER.matcher(lane.getFileName().toString()).matches() && Files.isDirectory(lane)) {
                total += lane(lane);
            }
        }
        return total;
    }

    /** Whether {@code lane} is one of {@code root}'s lanes (a lane folder directly in it). */
    public static boolean isLaneOf(Path root, Path lane) {
        return lane.toAbsolutePath().normalize().getParent()
                .equals(root.toAbsolutePath().normalize())
                && LaneFiles.LANE_FOLDER.matcher(lane.getFileName().toString()).matches();
    }

    /** A data file's size if it holds data, else 0 (see the class). */
    private static long dataBytes(Path file) throws IOException {
        ByteBuffer raw = ByteBuffer.allocate(Layout.FILE_HEADER_SIZE + Layout.RECORD_HEADER_SIZE)
                .order(ByteOrder.LITTLE_ENDIAN);
        long size;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            size = channel.size();
            while (raw.hasRemaining() && channel.read(raw) >= 0) {
                // until full or the file ends
            }
        } catch (NoSuchFileException gone) {
            return 0;
        }
        raw.flip();
        FileHeader header;
        try {
            header = FileHeader.parse(raw.duplicate(), file.toString());
        } catch (CorruptFileException | FormatVersionException unreadable) {
            return size;
        }
        if (header.sealedEnd() != 0) {
            return header.sealedEnd() > Layout.FILE_HEADER_SIZE ? size : 0;
        }
        if (raw.limit() < Layout.FILE_HEADER_SIZE + Layout.RECORD_HEADER_SIZE) {
            return 0;
        }
        int type = raw.get(Layout.FILE_HEADER_SIZE + Layout.REC_TYPE) & 0xFF;
        if (type < Layout.ADD || type > Layout.TYPE_MAX) {
            return 0;
        }
        long fileId32 = Integer.toUnsignedLong(raw.getInt(Layout.FILE_HEADER_SIZE + Layout.REC_FILE_ID));
        return fileId32 == Layout.fileId32(header.fileId()) ? size : 0;
    }

    private static long sizeOf(Path file) throws IOException {
        try {
            return Files.size(file);
        } catch (NoSuchFileException gone) {
            return 0;
        }
    }

    /** The entries of {@code folder}, or none when it does not exist. */
    private static List<Path> entries(Path folder) throws IOException {
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(folder)) {
            List<Path> found = new ArrayList<>();
            stream.forEach(found::add);
            return found;
        } catch (NoSuchFileException | NotDirectoryException absent) {
            return List.of();
        }
    }
}
