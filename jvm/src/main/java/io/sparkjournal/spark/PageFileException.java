package io.sparkjournal.spark;

import java.io.IOException;

/**
 * A page file a live PAGE record names is missing, or not as paged (its size
 * differs from its PAGE record's), or does not read as Parquet: a *damaged*
 * page file (EVENTS.md, "PAGE records (user type 3) and page files";
 * PageFileError on the Python side). The message names the lane and the
 * file. The read fails: a page's rows are never left out in silence.
 */
final class PageFileException extends IOException {

    private static final long serialVersionUID = 1L;

    PageFileException(String message) {
        super(message);
    }

    PageFileException(String message, Throwable cause) {
        super(message, cause);
    }
}
