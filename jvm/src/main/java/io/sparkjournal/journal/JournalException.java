package io.sparkjournal.journal;

import java.io.IOException;

/**
 * The base of the journal layer's own errors: every message says what was
 * wrong and, where it can, what to do. Thrown as is for a lane folder that
 * does not exist ("no journal at ...: the folder does not exist") and for what
 * this JVM reader cannot do though the format allows it (a file too big for
 * one mapped ByteBuffer; the Python reader reads such a lane).
 */
public class JournalException extends IOException {

    private static final long serialVersionUID = 1L;

    public JournalException(String message) {
        super(message);
    }
}
