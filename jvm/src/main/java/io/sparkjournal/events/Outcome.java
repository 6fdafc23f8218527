package io.sparkjournal.events;

/**
 * The fate of a prepared transaction by the commit log (COMMIT_LOG.md,
 * "Outcome of a prepared transaction"; FOREIGN is EVENTS.md's *not-ours* XID).
 * Readers show COMMITTED only: UNDECIDED is presumed aborted until the driver
 * decides it, and FOREIGN (an XID this sink did not write) is left to its
 * owner.
 */
public enum Outcome {
    COMMITTED("committed"),
    ABORTED("aborted"),
    UNDECIDED("undecided"),
    FOREIGN("foreign");

    private final String value;

    Outcome(String value) {
        this.value = value;
    }

    /** The outcome in lower case ("committed", "aborted", ...), as logs and messages give it. */
    public String value() {
        return value;
    }
}
