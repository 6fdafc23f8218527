package io.sparkjournal.events;

/**
 * A lane request that cannot be read: not JSON, not a format 1 request, or a
 * delete request not of the shape {"records": {"<record id>": null or
 * [positions]}}. Twin of Python's {@code
 * sparkjournal.events.requests.RequestError}.
 */
public class RequestException extends EventsException {

    private static final long serialVersionUID = 1L;

    public RequestException(String message) {
        super(message);
    }

    public RequestException(String message, Throwable cause) {
        super(message, cause);
    }
}
