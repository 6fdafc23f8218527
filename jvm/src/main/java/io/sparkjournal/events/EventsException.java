package io.sparkjournal.events;

import java.io.IOException;

/**
 * Base of the events layer's errors, and the twin of Python's
 * {@code sparkjournal.errors.SparkJournalError} where Python raises that class
 * itself (a query id that cannot name a commit log folder). Every subclass is
 * the twin of one Python error class; a format newer than this code reads is
 * {@link io.sparkjournal.format.FormatVersionException} instead, as in the
 * format layer. The message names what is wrong (file, record id) and what to
 * do, as Python's does.
 */
public class EventsException extends IOException {

    private static final long serialVersionUID = 1L;

    public EventsException(String message) {
        super(message);
    }

    public EventsException(String message, Throwable cause) {
        super(message, cause);
    }
}
