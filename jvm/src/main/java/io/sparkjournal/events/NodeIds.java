package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * A node root's id (EVENTS.md, "A node root", reader requirements): the
 * NODE_ID file's UTF-8 text without leading and trailing ASCII whitespace
 * (space, tab, CR, LF only: other Unicode spaces are part of the id), or
 * null for a root without one (or with an empty one). Bytes that are not
 * UTF-8 are damaged: {@link NodeIdException} naming the file. Commit messages
 * name lanes by the id, so a reader can tell whether the root at a path is
 * the very root a lane was written in.
 */
public final class NodeIds {

    public static final String FILE = Constants.Paths.NODE_ID_FILE;

    private NodeIds() {
    }

    /**
     * The id of {@code root}, or null. NodeIdException when NODE_ID is not
     * UTF-8; an UncheckedIOException for a file that cannot be read otherwise.
     */
    public static String read(Path root) throws NodeIdException {
        Path file = root.resolve(FILE);
        byte[] raw;
        try {
            raw = Files.readAllBytes(file);
        } catch (NoSuchFileException none) {
            return null;
        } catch (IOException error) {
            throw new UncheckedIOException("cannot read " + file + ": " + error, error);
        }
        return parse(raw, file.toString());
    }

    /** The id {@code raw} (the bytes of NODE_ID file {@code where}) holds, or null when empty. */
    static String parse(byte[] raw, String where) throws NodeIdException {
        int start = 0;
        int end = raw.length;
        while (start < end && asciiSpace(raw[start])) {
            start++;
        }
        while (end > start && asciiSpace(raw[end - 1])) {
            end--;
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw, start, end - start)).toString();
        } catch (CharacterCodingException notUtf8) {
            throw new NodeIdException(where, "its bytes are not UTF-8 (" + notUtf8 + ")");
        }
        return text.isEmpty() ? null : text;
    }

    private static boolean asciiSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\r' || b == '\n';
    }
}
