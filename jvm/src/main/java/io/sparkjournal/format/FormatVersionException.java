package io.sparkjournal.format;

import java.io.IOException;

/**
 * Something on disk written by a newer sparkjournal than this code reads. It is
 * refused, never misread and never changed (FORMAT.md, "Newer formats are
 * refused": JSON.md's *newer-format* kind). The message names the format found
 * and the highest this code reads, in the words FormatVersionError uses on the
 * Python side: "... was written by a newer sparkjournal (format N, this reads
 * up to M): upgrade sparkjournal to read it. Nothing was changed".
 */
public final class FormatVersionException extends IOException {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final long found;
    private final long supported;

    /**
     * {@code what} names the kind of thing ("data file"), {@code path} where it
     * is, {@code found} the format it states and {@code supported} the newest
     * this code reads.
     */
    public FormatVersionException(String what, String path, long found, long supported) {
        super(what + " " + path + " was written by a newer sparkjournal (format " + found
                + ", this reads up to " + supported + "): upgrade sparkjournal to read it."
                + " Nothing was changed");
        this.path = path;
        this.found = found;
        this.supported = supported;
    }

    public String path() {
        return path;
    }

    /** The format version found on disk. */
    public long found() {
        return found;
    }

    /** The newest format version this code reads. */
    public long supported() {
        return supported;
    }
}
