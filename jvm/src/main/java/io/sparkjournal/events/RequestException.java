package io.sparkjournal.events;

/**
 * A lane request that cannot be read: not JSON, not a format 1 request, or a
 * delete request not of the shape {"records": {"<record id>": null or
 * [positions]}}: a *damaged* lane request (EVENTS.md, "Lane requests"; JSON.md,
 * "Error kinds"; RequestError on the Python side).
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
