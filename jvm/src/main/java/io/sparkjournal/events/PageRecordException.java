package io.sparkjournal.events;

/**
 * A PAGE record body, or a page request, that does not decode, or a page whose
 * name or record ids break PageRef's rules. Twin of Python's {@code
 * sparkjournal.events.page_records.PageRecordError}.
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
