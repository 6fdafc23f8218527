package io.sparkjournal.journal;

/**
 * One version of a record's body, as the replay state holds it: the file and offset of the record that carries
 * it, the body length in that record, the user type, and for a large record
 * the id of its body file.
 *
 * <p>{@code badReference}: the record has the LARGE flag but its body is not a
 * 24-byte reference (held as large id -1): it names no body, and reading it
 * fails with CorruptJournalException. A LARGE record whose reference holds
 * large id 0 counts as not large (FORMAT.md, "Large records"): its body is
 * the 24 reference bytes. No writer draws id 0.
 */
record Version(long fileId, long offset, int bodyLength, int userType, long largeId,
               boolean badReference) {

    /** True when the body lives in {@code large/} (or the record names no body). */
    boolean large() {
        return largeId != 0 || badReference;
    }
}
