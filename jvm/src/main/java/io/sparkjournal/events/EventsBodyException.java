package io.sparkjournal.events;

/**
 * An EVENTS record body that is not an Arrow IPC stream of a schema and a
 * message, or whose tag (query, batch id) or stats do not decode. Twin of
 * Python's {@code pyarrow.ArrowInvalid (and the OSError / EOFError pyarrow
 * raises) of event_records.split_body, and the ValueError of a tag or stats
 * entry that does not parse}.
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
