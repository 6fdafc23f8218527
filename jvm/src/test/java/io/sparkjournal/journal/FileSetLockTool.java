package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A command for tests/test_jvm_file_set_lock.py: two snapshots of one lane in
 * this JVM, read through two spellings of its path (a symbolic link in a
 * parent folder, say). Not an API.
 *
 * <pre>FileSetLockTool LANE OTHER</pre>
 *
 * Reads the lane as {@code LANE}, then as {@code OTHER}, closes the snapshot
 * read as {@code OTHER}, prints {@code {"held": true}} and keeps the other
 * snapshot, and with it the lane's file-set lock ({@link FileSetLock}), until
 * stdin ends. Exit 0; on an I/O error {@code {"error": class, "message": ...}}
 * and exit 2; bad arguments exit 1.
 */
public final class FileSetLockTool {

    private FileSetLockTool() {
    }

    public static void main(String[] args) {
        if (args.length != 2 || args[0].startsWith("--") || args[1].startsWith("--")) {
            System.err.println("usage: FileSetLockTool LANE OTHER");
            System.exit(1);
            return;
        }
        Path lane = Paths.get(args[0]);
        Path other = Paths.get(args[1]);
        try (LaneSnapshot kept = LaneSnapshot.read(lane)) {
            LaneSnapshot.read(other).close();
            System.out.println("{\"held\": true}");
            System.out.flush();
            System.in.readAllBytes();
        } catch (IOException | RuntimeException failed) {
            System.out.println("{\"error\": \"" + failed.getClass().getSimpleName()
                    + "\", \"message\": \"" + LaneWriterLockTool.escaped(String.valueOf(
                    failed.getMessage())) + "\"}");
            System.out.flush();
            System.exit(2);
        }
        System.exit(0);
    }
}
