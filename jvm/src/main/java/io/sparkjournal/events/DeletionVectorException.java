package io.sparkjournal.events;

/**
 * A deletion vector body that does not decode: the record's CRC held, so it
 * was written this way (damage before the CRC was taken): *damaged*
 * (EVENTS.md, "Deletion vectors"; DeletionVectorError on the Python side).
 */
public class DeletionVectorException extends EventsException {

    private static final long serialVersionUID = 1L;

    public DeletionVectorException(String message) {
        super(message);
    }

    public DeletionVectorException(String message, Throwable cause) {
        super(message, cause);
    }
}
