package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * What every JVM writer uses to make folders and files (FORMAT.md, "A journal
 * (lane) directory"): the default modes, folders 0750 and files 0640, less
 * the umask (a JVM writer refuses other dirMode/fileMode values), and the
 * folder sync that makes a create, rename or removal in a folder durable.
 */
public final class DiskModes {

    public static final FileAttribute<Set<PosixFilePermission>> DIR_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-x---"));
    public static final FileAttribute<Set<PosixFilePermission>> FILE_MODE =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r-----"));

    private DiskModes() {
    }

    /** Makes creates, renames and removals in {@code folder} durable (fsync of the folder). */
    public static void syncFolder(Path folder) throws IOException {
        try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException failed) {
            throw new IOException("syncing the directory " + folder + ": " + failed, failed);
        }
    }
}
