package io.sparkjournal.events;

/**
 * An EVENTS record body that is not an Arrow IPC stream of a schema and a
 * message, or whose tag (query, batch id) does not decode: EVENTS.md's
 * *damaged* EVENTS body ("EVENTS records", reader requirements; JSON.md,
 * "Error kinds"). Statistics that do not parse are never this error: they are
 * ignored (EVENTS.md, "Statistics").
 */
public class EventsBodyException extends EventsException {

    private static final long serialVersionUID = 1L;

    public EventsBodyException(String message) {
        super(message);
    }

    public EventsBodyException(String message, Throwable cause) {
        super(message, cause);
    }
}
