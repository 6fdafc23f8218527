package io.sparkjournal.events;

import io.sparkjournal.format.Constants;

/**
 * The user record types of a node root's lanes (FORMAT.md, "Above the
 * journal: a stream's events"), from their one declaration
 * (sparkjournal/format/constants.json, the generated {@link Constants}),
 * shared by every implementation. A record of any other
 * user type is not the events layer's: readers leave it alone.
 */
public final class UserTypes {

    private UserTypes() {
    }

    /** One Arrow IPC stream (schema + one batch) of events: {@link EventsBody}. */
    public static final int EVENTS = Constants.UserTypes.EVENTS;

    /** Deleted rows of one stored record, by original position: {@link DeletionVector}. */
    public static final int DELETION_VECTOR = Constants.UserTypes.DELETION_VECTOR;

    /** A page file that replaced stored records: {@link PageRef}. */
    public static final int PAGE = Constants.UserTypes.PAGE;

    /** The type's name ("EVENTS"), or "user type N" for one the events layer does not know. */
    public static String name(int userType) {
        switch (userType) {
            case EVENTS:
                return "EVENTS";
            case DELETION_VECTOR:
                return "DELETION_VECTOR";
            case PAGE:
                return "PAGE";
            default:
                return "user type " + userType;
        }
    }
}
