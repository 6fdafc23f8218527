package io.sparkjournal.events;

import java.io.IOException;

/**
 * Base of the events layer's errors, thrown as is where nothing more precise
 * applies (a query id that cannot name a commit log folder, COMMIT_LOG.md).
 * Every subclass is one of JSON.md's error kinds for one structure ("Error
 * kinds", and EVENTS.md's table); a format newer than this code reads is
 * {@link io.sparkjournal.format.FormatVersionException} instead, as in the
 * format layer. The message names what is wrong (file, record id) and what to
 * do.
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
