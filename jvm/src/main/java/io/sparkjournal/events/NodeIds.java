package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * A node root's id, as sparkjournal/events/node.py's read_node_id reads it:
 * the NODE_ID file's text, stripped, or null for a root without one (or with
 * an empty one). Commit messages name lanes by it, so a reader can tell
 * whether the root at a path is the very root a lane was written in.
 */
public final class NodeIds {

    public static final String FILE = Constants.Paths.NODE_ID_FILE;

    private NodeIds() {
    }

    public static String read(Path root) {
        try {
            String text = Files.readString(root.resolve(FILE), StandardCharsets.UTF_8).strip();
            return text.isEmpty() ? null : text;
        } catch (NoSuchFileException none) {
            return null;
        } catch (IOException error) {
            throw new UncheckedIOException("cannot read " + root.resolve(FILE) + ": " + error, error);
        }
    }
}
