package io.sparkjournal.journal;

/**
 * A folder the lane names for itself (its {@code large/} folder) leads outside
 * the lane, through a symbolic link or otherwise: refused, as Python's
 * PathOutsideError (journal/inside.py) refuses it; sparkjournal reads only
 * inside its journal. The message is Python's.
 */
public final class PathOutsideException extends JournalException {

    private static final long serialVersionUID = 1L;

    private final String what;
    private final String path;
    private final String root;

    PathOutsideException(String what, String path, String root, String message) {
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
