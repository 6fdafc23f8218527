package io.sparkjournal.events;

/**
 * A root's NODE_ID whose bytes are not UTF-8: *damaged* (EVENTS.md, "A node
 * root"; NodeIdError on the Python side). No writer writes one; nothing is
 * changed and the root's lanes are not read. The message names the file.
 */
public final class NodeIdException extends EventsException {

    private static final long serialVersionUID = 1L;

    private final String path;

    public NodeIdException(String path, String detail) {
        super("NODE_ID file " + path + " is damaged: " + detail + ". Nothing was changed; restore it "
                + "from a backup (the commit log names this root's lanes by the node id it held)");
        this.path = path;
    }

    /** The NODE_ID file. */
    public String path() {
        return path;
    }
}
