package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import io.sparkjournal.format.FormatVersionException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.BaseIntVector;

/**
 * The deleted rows of a lane by record id (deletions.Deletions): the union of
 * its deletion vectors and its pending delete requests. A record is deleted
 * whole, or in some original positions; several vectors of one target add up.
 * Not thread-safe (build it, then share it read-only).
 *
 * <p>A record may be present with no position at all (a delete request
 * listing it with [], EVENTS.md, "Lane requests"): {@link #contains} is then
 * true, {@link #whole} false and {@link #rowsOf} empty; a reader then still
 * routes its rows through the deleted-rows path, which keeps them all.
 *
 * <p>Original positions: a row's place in its record as first written. A
 * record whose deleted rows compaction dropped carries its survivors' original
 * positions in the hidden column {@link #ROW_COLUMN}; without it, a row's
 * original position is its index ({@link #originalPosition}).
 */
public final class Deletions {

    /** The hidden column of original positions (uint32), where rows were dropped. */
    public static final String ROW_COLUMN = Constants.HiddenColumns.ROW_COLUMN;

    private static final long[] NONE = new long[0];

    private final Map<Long, long[]> rows = new LinkedHashMap<>();   // null value: whole record

    /** Whether nothing is deleted. */
    public boolean isEmpty() {
        return rows.isEmpty();
    }

    /** Whether the record has an entry (whole, or positions, possibly none). */
    public boolean contains(long recordId) {
        return rows.containsKey(recordId);
    }

    /** The records with an entry, in the order first added. */
    public Set<Long> recordIds() {
        return Collections.unmodifiableSet(rows.keySet());
    }

    /** Deletes {@code positions} (original positions, 0 .. 2^32 - 1; null: every row). */
    public void add(long recordId, long[] positions) {
        if (positions == null) {
            rows.put(recordId, null);
            return;
        }
        if (rows.containsKey(recordId) && rows.get(recordId) == null) {
            return;
        }
        long[] current = rows.getOrDefault(recordId, NONE);
        long[] added = positions.clone();
        Arrays.sort(added);
        long[] merged = new long[current.length + added.length];
        int i = 0;
        int j = 0;
        int n = 0;
        while (i < current.length || j < added.length) {
            long next = j >= added.length || (i < current.length && current[i] <= added[j])
                    ? current[i++] : added[j++];
            if (n == 0 || merged[n - 1] != next) {
                merged[n++] = next;
            }
        }
        rows.put(recordId, Arrays.copyOf(merged, n));
    }

    /** Adds every entry of {@code other}. */
    public void merge(Deletions other) {
        for (Map.Entry<Long, long[]> entry : other.rows.entrySet()) {
            add(entry.getKey(), entry.getValue());
        }
    }

    /** Adds a deletion vector's body ({@link DeletionVector#decode}). */
    public void addVector(ByteBuffer body, String where)
            throws DeletionVectorException, FormatVersionException {
        DeletionVector vector = DeletionVector.decode(body, where);
        add(vector.target(), vector.positions());
    }

    /** The deleted positions of a record, ascending; null: all of them; empty if none. */
    public long[] rowsOf(long recordId) {
        if (!rows.containsKey(recordId)) {
            return NONE;
        }
        long[] found = rows.get(recordId);
        return found == null ? null : found.clone();
    }

    /** Whether every row of the record is deleted. */
    public boolean whole(long recordId) {
        return rows.containsKey(recordId) && rows.get(recordId) == null;
    }

    /** Whether the row at original position {@code position} of the record is deleted. */
    public boolean isDeleted(long recordId, long position) {
        if (!rows.containsKey(recordId)) {
            return false;
        }
        long[] found = rows.get(recordId);
        return found == null || Arrays.binarySearch(found, position) >= 0;
    }

    /**
     * The original position of row {@code index} of a stored record:
     * {@code rowColumn}'s value (the record's {@link #ROW_COLUMN}, read as
     * unsigned) if the record has that column, else the index itself.
     */
    public static long originalPosition(BaseIntVector rowColumn, int index) {
        if (rowColumn == null) {
            return index;
        }
        long value = rowColumn.getValueAsLong(index);
        return value & 0xffffffffL;
    }
}
