package io.sparkjournal.events;

/** A lane's task ran on a node that does not hold the lane (Python: lane_scan.WrongNodeError). */
public final class WrongNodeException extends EventsException {

    private static final long serialVersionUID = 1L;

    public WrongNodeException(String message) {
        super(message);
    }
}
