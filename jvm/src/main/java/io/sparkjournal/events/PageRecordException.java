package io.sparkjournal.events;

/**
 * A PAGE record body, or a page request, that does not decode, or a page whose
 * name or record ids break PageRef's rules: *damaged* (EVENTS.md, "PAGE records
 * (user type 3) and page files"; PageRecordError on the Python side).
 */
public class PageRecordException extends EventsException {

    private static final long serialVersionUID = 1L;

    public PageRecordException(String message) {
        super(message);
    }

    public PageRecordException(String message, Throwable cause) {
        super(message, cause);
    }
}
