package io.sparkjournal.events;

/**
 * The commit log cannot be read: an entry that is no decision, a schema that
 * is no Arrow schema, a location or folder that cannot be listed or read.
 * Never a reason to treat a batch as aborted. JSON.md's *damaged* kind for the
 * commit log (CommitLogError on the Python side).
 */
public class CommitLogException extends EventsException {

    private static final long serialVersionUID = 1L;

    public CommitLogException(String message) {
        super(message);
    }

    public CommitLogException(String message, Throwable cause) {
        super(message, cause);
    }
}
