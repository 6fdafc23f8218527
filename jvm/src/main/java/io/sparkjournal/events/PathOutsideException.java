package io.sparkjournal.events;

/**
 * A path the events layer would read leads outside the lane it belongs to (a
 * {@code requests/} folder or request file that is a symbolic link out, or
 * reached through {@code ..}). Twin of Python's
 * {@code sparkjournal.journal.inside.PathOutsideError}; the message is the one
 * {@code check_inside} gives.
 */
public class PathOutsideException extends EventsException {

    private static final long serialVersionUID = 1L;

    public PathOutsideException(String message) {
        super(message);
    }
}
