package io.sparkjournal.format;

import java.io.IOException;

/**
 * A data file whose header cannot be trusted: wrong magic, a CRC-32C that does
 * not match, an implausible field, or a size on disk other than the header's.
 * A writer's load moves such a file to attic/, never deleting it (FORMAT.md,
 * "Data file"); a reader must not read its records. The message names the file and what was
 * wrong.
 */
public final class CorruptFileException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final String detail;

    /** {@code path}: the file as the caller named it; {@code detail}: what was wrong. */
    public CorruptFileException(String path, String detail) {
        super("data file " + path + " has a bad header: " + detail);
        this.path = path;
        this.detail = detail;
    }

    /** The file, as the caller named it. */
    public String path() {
        return path;
    }

    /** What was wrong, without the file name. */
    public String detail() {
        return detail;
    }
}
