package io.sparkjournal.journal;

/**
 * Damage before the tail of a lane (or in something a lane refers to: its
 * compaction control file, a large body): never skipped silently. JSON.md's
 * *damaged* kind for lanes (CorruptJournalError on the Python side, with the
 * same message), naming the file
 * (as the loader named it: the lane folder as given, joined with the file's
 * name) and the byte offset where the damage was found (0 when it concerns the
 * file as a whole). Nothing on disk is changed by the reader that throws it.
 */
public final class CorruptJournalException extends JournalException {

    private static final long serialVersionUID = 1L;

    private final String path;
    private final long offset;
    private final String detail;

    public CorruptJournalException(String path, long offset, String detail) {
        super("journal file " + path + " is corrupt at offset " + offset + ": " + detail
                + ". Nothing was changed. Run `sparkjournal verify` to see the extent of the"
                + " damage; open the journal with recover=true to move the damaged file to"
                + " attic/ and get a report of exactly what was lost.");
        this.path = path;
        this.offset = offset;
        this.detail = detail;
    }

    /** The damaged file, as the loader named it. */
    public String path() {
        return path;
    }

    /** Where in it the damage was found. */
    public long offset() {
        return offset;
    }

    /** What was wrong, without the file, the offset and the advice. */
    public String detail() {
        return detail;
    }
}
