package io.sparkjournal.journal;

/**
 * A path leading out of the journal: a folder or file the lane names for
 * itself (its {@code large/} folder, a lane request) outside the lane, or a
 * lane of a node root that is a symbolic link (EVENTS.md, "A node root").
 * The *outside* error kind of JSON.md, "Error kinds": refused, nothing
 * changed; sparkjournal reads and writes only inside its journal.
 */
public final class PathOutsideException extends JournalException {

    private static final long serialVersionUID = 1L;

    private final String what;
    private final String path;
    private final String root;

    public PathOutsideException(String what, String path, String root, String message) {
        super(message);
        this.what = what;
        this.path = path;
        this.root = root;
    }

    /** What the path is ("the large records folder"). */
    public String what() {
        return what;
    }

    /** The path as the lane names it, relative to the root. */
    public String path() {
        return path;
    }

    /** The lane. */
    public String root() {
        return root;
    }
}
