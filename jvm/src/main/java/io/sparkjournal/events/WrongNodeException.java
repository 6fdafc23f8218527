package io.sparkjournal.events;

/**
 * A lane's task ran on a node that does not hold the lane: the root there has
 * another node id, or none (EVENTS.md, "A node root": the reader does not read
 * it, the task runs where the lane is).
 */
public final class WrongNodeException extends EventsException {

    private static final long serialVersionUID = 1L;

    public WrongNodeException(String message) {
        super(message);
    }
}
