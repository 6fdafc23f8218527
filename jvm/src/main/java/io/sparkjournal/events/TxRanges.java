package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.journal.StrictJson;
import java.util.Arrays;

/**
 * The committed transactions of one lane in a checkpoint (COMMIT_LOG.md,
 * "Checkpoints", {@code committed}): tx ids as sorted, disjoint, inclusive
 * ranges {@code [first, last]}. Tx ids are u64s held in longs and compared
 * unsigned. Immutable.
 */
public final class TxRanges {

    /** first0, last0, first1, last1, ... ascending (unsigned), disjoint. */
    private final long[] bounds;

    private TxRanges(long[] bounds) {
        this.bounds = bounds;
    }

    /**
     * The ranges {@code value} holds: a list of two-element lists of
     * integers in 0 .. 2^64 - 1 (JSON.md), first &le; last, each range above the one
     * before it. Anything else is an IllegalArgumentException saying what is
     * wrong (the checkpoint's reader reports it as damage). Adjacent ranges
     * left unmerged are accepted: they name the same transactions.
     */
    public static TxRanges parse(JsonNode value) {
        if (value == null || !value.isArray()) {
            throw new IllegalArgumentException("committed must be a list of [first, last] ranges");
        }
        long[] bounds = new long[value.size() * 2];
        for (int i = 0; i < value.size(); i++) {
            JsonNode range = value.get(i);
            if (!range.isArray() || range.size() != 2) {
                throw new IllegalArgumentException("committed range " + range + " is not [first, last]");
            }
            long first = txId(range.get(0));
            long last = txId(range.get(1));
            if (Long.compareUnsigned(first, last) > 0) {
                throw new IllegalArgumentException("committed range " + range + " ends before it starts");
            }
            if (i > 0 && Long.compareUnsigned(bounds[2 * i - 1], first) >= 0) {
                throw new IllegalArgumentException("committed range " + range
                        + " is not above the range before it (ranges must be sorted and disjoint)");
            }
            bounds[2 * i] = first;
            bounds[2 * i + 1] = last;
        }
        return new TxRanges(bounds);
    }

    private static long txId(JsonNode value) {
        return StrictJson.u64Value(value, "a committed tx id");
    }

    /** Whether {@code tx} (a u64) lies in one of the ranges. */
    public boolean contains(long tx) {
        int low = 0;
        int high = bounds.length / 2 - 1;
        while (low <= high) {
            int middle = (low + high) >>> 1;
            if (Long.compareUnsigned(tx, bounds[2 * middle]) < 0) {
                high = middle - 1;
            } else if (Long.compareUnsigned(tx, bounds[2 * middle + 1]) > 0) {
                low = middle + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    /** The bounds, first0, last0, first1, last1, ... (u64s in longs), as the checkpoint lists them. */
    long[] bounds() {
        return bounds.clone();
    }

    /** The number of ranges. */
    public int size() {
        return bounds.length / 2;
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < bounds.length; i += 2) {
            text.append(i == 0 ? "[" : ", [").append(Long.toUnsignedString(bounds[i])).append(", ")
                    .append(Long.toUnsignedString(bounds[i + 1])).append(']');
        }
        return text.append(']').toString();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof TxRanges ranges && Arrays.equals(bounds, ranges.bounds);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bounds);
    }
}
