package io.sparkjournal.spark;

import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.array.ByteArrayMethods;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A read's distinct values of one string column, each one on-heap string
 * shared by every row that holds it: the dictionary parquet stores and a
 * journal record does not, built as the read goes, across the records of its
 * partition.
 *
 * <p>Why: Spark's hash aggregation (its fast first-level map) and other
 * consumers take a key's bytes with {@code UTF8String.getBytes}, which hands
 * back the string's own array only when the string is exactly an on-heap
 * array, and otherwise allocates and copies the bytes, row after row. A
 * string over mapped memory is always copied there; a string from here never
 * is, and equal keys share one array, as parquet's dictionary-encoded columns
 * do.
 *
 * <p>Cost and limits: one pass over each record's column. A value of up to
 * {@link #WORD_BYTES} bytes is known by its length and two words that
 * together cover every byte (its first and last 8, 4 or 1-3 bytes), kept
 * beside each entry, so finding it is a hash of those and a comparison of
 * three numbers, without touching the entry's string. A longer value is
 * hashed over its length and at most its first {@link #HASHED_BYTES} and last
 * 8 bytes and compared in full with the entry found. Keys are short, and a long value
 * (a payload, a document) is rarely grouped on while every scan would pay its
 * comparison: a record whose values average more than
 * {@link #MAX_AVERAGE_BYTES} bytes is not looked up. A column of mostly
 * distinct values (ids, times as text) gains nothing: once its distinct values
 * pass half the rows seen (plus {@link #SLACK}), {@link #MAX_VALUES} values or
 * {@link #MAX_BYTES} bytes, the dictionary gives up for the rest of the read.
 * Either way the column then reads its strings from memory, as before. Nothing
 * here reads outside a row's own bytes, whose offsets the column checked.
 *
 * <p>One task's reader uses an instance, from one thread.
 */
final class StringDictionary {

    static final int MAX_VALUES = 1 << 16;
    static final long MAX_BYTES = 1L << 20;
    static final int SLACK = 1024;
    static final int HASHED_BYTES = 32;
    static final int MAX_AVERAGE_BYTES = 32;
    static final int WORD_BYTES = 16;

    private UTF8String[] slots = new UTF8String[2048];
    private int[] slotHashes = new int[2048];
    private int[] slotLengths = new int[2048];
    private long[] slotHeads = new long[2048];      // the value's head and tail words (see the class)
    private long[] slotTails = new long[2048];
    private int size;
    private long bytes;
    private long rowsSeen;
    private long valuesShared;
    private boolean givenUp;

    /** The values (null rows left out) handed out as the dictionary's strings (SharedStringsMetric). */
    long valuesShared() {
        return valuesShared;
    }

    /**
     * Each of the record's rows as the dictionary's string (null for a null
     * row), or null when the column reads better from memory. {@code offsets}:
     * the address of rows + 1 checked int offsets into {@code data}.
     */
    UTF8String[] rowsOf(DirectColumn column, long data, long offsets, int rows) {
        int start = Platform.getInt(null, offsets);
        long average = (Platform.getInt(null, offsets + 4L * rows) - (long) start) / Math.max(1, rows);
        if (givenUp || average > MAX_AVERAGE_BYTES) {
            return null;
        }
        UTF8String[] values = new UTF8String[rows];
        long shared = 0;
        for (int row = 0; row < rows; row++) {
            int end = Platform.getInt(null, offsets + 4L * row + 4);
            if (!column.isNullAt(row)) {
                values[row] = entry(data + start, end - start);
                if (values[row] == null) {
                    return null;
                }
                shared++;
            }
            start = end;
            rowsSeen++;
        }
        valuesShared += shared;
        return values;
    }

    /** The shared string for these bytes, added if new; null once the dictionary gave up. */
    private UTF8String entry(long address, int length) {
        long head = headWord(address, length);
        long tail = tailWord(address, length);
        int hash = length <= WORD_BYTES ? mix(length, head, tail) : hash(address, length);
        int mask = slots.length - 1;
        int slot = hash & mask;
        UTF8String found;
        while ((found = slots[slot]) != null) {
            if (slotHashes[slot] == hash && slotHeads[slot] == head && slotTails[slot] == tail
                    && slotLengths[slot] == length
                    && (length <= WORD_BYTES || sameBytes(found, address, length))) {
                return found;
            }
            slot = (slot + 1) & mask;
        }
        size++;
        bytes += length;
        if (size > MAX_VALUES || bytes > MAX_BYTES || size > rowsSeen / 2 + SLACK) {
            giveUp();
            return null;
        }
        byte[] copy = new byte[length];
        Platform.copyMemory(null, address, copy, Platform.BYTE_ARRAY_OFFSET, length);
        found = UTF8String.fromBytes(copy);
        slots[slot] = found;
        slotHashes[slot] = hash;
        slotLengths[slot] = length;
        slotHeads[slot] = head;
        slotTails[slot] = tail;
        if (size * 2 > slots.length) {
            grow();
        }
        return found;
    }

    /**
     * With {@link #tailWord}, what a value of at most {@link #WORD_BYTES} bytes
     * is, given its length: its first 8 bytes (8-16 bytes long), first 4
     * (4-7), or first, middle and last byte (1-3). Reads only the value's own bytes.
     */
    private static long headWord(long address, int length) {
        if (length >= 8) {
            return Platform.getLong(null, address);
        } else if (length >= 4) {
            return Platform.getInt(null, address) & 0xFFFFFFFFL;
        } else if (length > 0) {
            return (Platform.getByte(null, address) & 0xFF)
                    | (Platform.getByte(null, address + length / 2) & 0xFF) << 8
                    | (Platform.getByte(null, address + length - 1) & 0xFF) << 16;
        }
        return 0;
    }

    /** The value's last 8 bytes (8 bytes long or more), last 4 (4-7), else 0. */
    private static long tailWord(long address, int length) {
        if (length >= 8) {
            return Platform.getLong(null, address + length - 8);
        } else if (length >= 4) {
            return Platform.getInt(null, address + length - 4) & 0xFFFFFFFFL;
        }
        return 0;
    }

    private static int mix(int length, long head, long tail) {
        long h = (head ^ length * 0x9E3779B97F4A7C15L) * 0xC2B2AE3D27D4EB4FL;
        h = (h ^ tail) * 0x165667B19E3779F9L;
        return (int) (h ^ (h >>> 29) ^ (h >>> 47));
    }

    private void giveUp() {
        givenUp = true;
        slots = null;
        slotHashes = null;
        slotLengths = null;
        slotHeads = null;
        slotTails = null;
    }

    private void grow() {
        UTF8String[] oldSlots = slots;
        int[] oldHashes = slotHashes;
        int[] oldLengths = slotLengths;
        long[] oldHeads = slotHeads;
        long[] oldTails = slotTails;
        int capacity = oldSlots.length * 2;
        slots = new UTF8String[capacity];
        slotHashes = new int[capacity];
        slotLengths = new int[capacity];
        slotHeads = new long[capacity];
        slotTails = new long[capacity];
        int mask = capacity - 1;
        for (int i = 0; i < oldSlots.length; i++) {
            if (oldSlots[i] != null) {
                int slot = oldHashes[i] & mask;
                while (slots[slot] != null) {
                    slot = (slot + 1) & mask;
                }
                slots[slot] = oldSlots[i];
                slotHashes[slot] = oldHashes[i];
                slotLengths[slot] = oldLengths[i];
                slotHeads[slot] = oldHeads[i];
                slotTails[slot] = oldTails[i];
            }
        }
    }

    private static int hash(long address, int length) {
        long h = length * 0x9E3779B97F4A7C15L;
        int hashed = Math.min(length, HASHED_BYTES);
        int at = 0;
        for (; at + 8 <= hashed; at += 8) {
            h = (h ^ Platform.getLong(null, address + at)) * 0xC2B2AE3D27D4EB4FL;
        }
        for (; at < hashed; at++) {
            h = (h ^ Platform.getByte(null, address + at)) * 0x165667B19E3779F9L;
        }
        if (length >= HASHED_BYTES + 8) {
            h = (h ^ Platform.getLong(null, address + length - 8)) * 0xC2B2AE3D27D4EB4FL;
        }
        return (int) (h ^ (h >>> 29) ^ (h >>> 47));
    }

    private static boolean sameBytes(UTF8String entry, long address, int length) {
        return entry.numBytes() == length
                && ByteArrayMethods.arrayEquals(entry.getBaseObject(), entry.getBaseOffset(), null, address, length);
    }
}
