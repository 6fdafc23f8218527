package io.sparkjournal.events;

/**
 * The fate of a prepared transaction by the commit log (resolve.Outcome).
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

    /** Python's {@code Outcome.value}. */
    public String value() {
        return value;
    }
}
