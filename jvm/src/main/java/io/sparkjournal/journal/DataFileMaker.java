package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Makes data files (FORMAT.md, "Data file": pre-created zero-filled as
 * {@code *.tmp}, synced, renamed, the folder synced) and names them
 * {@code data-<n>.sjd}.
 *
 * <p>Crash behaviour: the header and zeros up to the file size are written to
 * {@code <name>.tmp}, which is fsynced, renamed to {@code <name>}, and the
 * folder fsynced. A crash before the rename leaves only the {@code .tmp},
 * which no load reads and the next writer's load deletes; after the
 * folder sync the file is complete under its name: a valid header, no
 * records, which a load puts in the free pool. Created with the fileMode
 * {@link DiskModes#forPath} gives it, less the umask (FORMAT.md).
 */
final class DataFileMaker {

    /** Zeros are written this much at a time. */
    private static final int ZERO_CHUNK = 1 << 20;

    private DataFileMaker() {
    }

    /** "data-" + the number in ten digits + ".sjd", the name every writer gives. */
    static String name(long number) {
        return String.format("%s%010d%s", LaneFiles.DATA_PREFIX, number, LaneFiles.DATA_SUFFIX);
    }

    /**
     * The number in a data file's name, also while it is {@code .tmp} or
     * {@code .cmp}; -1 for any other name.
     */
    static long number(String name) {
        String base = name;
        for (String suffix : new String[] {".tmp", LaneFiles.COMPACTING_SUFFIX}) {
            if (base.endsWith(suffix)) {
                base = base.substring(0, base.length() - suffix.length());
            }
        }
        if (!LaneFiles.isDataFileName(base)) {
            return -1;
        }
        String digits = base.substring(LaneFiles.DATA_PREFIX.length(),
                base.length() - LaneFiles.DATA_SUFFIX.length());
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException notOurs) {
            return -1;
        }
    }

    /**
     * Creates {@code path} as {@code size} bytes: {@code header} (its bytes from
     * position to limit, at most one 4096-byte block) then zeros; durable under
     * its name when this returns (see the class). A file already at
     * {@code path} would be replaced: the caller picks a fresh name.
     */
    static void create(Path path, ByteBuffer header, long size) throws IOException {
        if (header.remaining() > Layout.FILE_HEADER_SIZE || size < Layout.FILE_HEADER_SIZE) {
            throw new IllegalArgumentException("a header of " + header.remaining() + " bytes does"
                    + " not fit in a " + size + "-byte file");
        }
        Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
        try {
            try (FileChannel out = FileChannel.open(tmp, java.util.Set.of(StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING),
                    DiskModes.fileAttribute(tmp))) {
                ByteBuffer block = ByteBuffer.allocate(Layout.FILE_HEADER_SIZE);
                block.put(header.duplicate()).clear();
                writeFully(out, block, 0);
                ByteBuffer zeros = ByteBuffer.allocateDirect(ZERO_CHUNK);
                for (long at = Layout.FILE_HEADER_SIZE; at < size; at += ZERO_CHUNK) {
                    zeros.clear().limit((int) Math.min(ZERO_CHUNK, size - at));
                    writeFully(out, zeros, at);
                }
                out.force(true);
            }
            Files.move(tmp, path, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException failed) {
            Files.deleteIfExists(tmp);
            throw new IOException("creating the data file " + path + ": " + failed, failed);
        }
        DiskModes.syncFolder(path.getParent());
    }


    /** Writes all of {@code data} (position to limit) at {@code offset}; moves its position. */
    static void writeFully(FileChannel out, ByteBuffer data, long offset) throws IOException {
        long at = offset;
        while (data.hasRemaining()) {
            int wrote = out.write(data, at);
            if (wrote <= 0) {
                throw new IOException("no space left: a write of " + data.remaining()
                        + " bytes at " + at + " wrote nothing");
            }
            at += wrote;
        }
    }
}
