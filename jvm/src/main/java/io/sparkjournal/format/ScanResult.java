package io.sparkjournal.format;

import java.util.Arrays;

/**
 * What a scan of one data file found (FORMAT.md, "Reading: where data ends"):
 * its clean records and where they end, the first foreign bytes and why.
 *
 * <p>Records are indexed 0 .. {@link #n()} - 1 in file order: first the
 * {@link #nClean()} valid records of the scanned file id before the first
 * foreign word, then any valid records of that file id found after it. All
 * offsets are from the start of the scanned buffer. Unsigned fields are
 * returned widened (u8, u16, u32 as non-negative ints or longs); u64 fields
 * (record id, tx id) as {@code long}s to be read unsigned
 * ({@link Long#toUnsignedString(long)}).
 *
 * <p>Instances are immutable once {@link RecordScan} returns them.
 */
public final class ScanResult {

    private int n;
    private byte[] types = new byte[16];
    private byte[] flags = new byte[16];
    private short[] userTypes = new short[16];
    private int[] bodyLengths = new int[16];
    private int[] counts = new int[16];
    private long[] recordIds = new long[16];
    private long[] txIds = new long[16];
    private long[] offsets = new long[16];
    private long cleanEnd;
    private long firstForeign = -1;
    private String foreignReason = "";
    private int nClean;
    private long scanEnd;

    ScanResult(long start) {
        this.cleanEnd = start;
    }

    /** What a scan of a file free by its header finds (journal/FreeByHeader): nothing of its own. */
    public static ScanResult empty() {
        ScanResult nothing = new ScanResult(Layout.FILE_HEADER_SIZE);
        nothing.finish(Layout.FILE_HEADER_SIZE);
        return nothing;
    }

    /** Appends one record (RecordScan only, while scanning). */
    void add(int type, int flag, int userType, int bodyLength, int count, long recordId,
             long txId, long offset) {
        if (n == offsets.length) {
            int grown = n * 2;
            types = Arrays.copyOf(types, grown);
            flags = Arrays.copyOf(flags, grown);
            userTypes = Arrays.copyOf(userTypes, grown);
            bodyLengths = Arrays.copyOf(bodyLengths, grown);
            counts = Arrays.copyOf(counts, grown);
            recordIds = Arrays.copyOf(recordIds, grown);
            txIds = Arrays.copyOf(txIds, grown);
            offsets = Arrays.copyOf(offsets, grown);
        }
        types[n] = (byte) type;
        flags[n] = (byte) flag;
        userTypes[n] = (short) userType;
        bodyLengths[n] = bodyLength;
        counts[n] = count;
        recordIds[n] = recordId;
        txIds[n] = txId;
        offsets[n] = offset;
        n++;
    }

    void setCleanEnd(long end) {
        cleanEnd = end;
    }

    /** Marks the first foreign word (RecordScan only; the records so far are the clean ones). */
    void setFirstForeign(long offset, String reason) {
        firstForeign = offset;
        foreignReason = reason;
        nClean = n;
    }

    void finish(long end) {
        scanEnd = end;
        if (firstForeign < 0) {
            nClean = n;
        }
    }

    /** Valid records of the scanned file id, before and after the first foreign word. */
    public int n() { return n; }

    /** Records before {@link #firstForeign()} (all of them when the data is clean). */
    public int nClean() { return nClean; }

    /** End of the last record before the first foreign word (past scan_end if that record
     *  reaches into the last, partial word); the scan's start, as given, if none. */
    public long cleanEnd() { return cleanEnd; }

    /** The first foreign 8-byte word, -1 when the data is clean. */
    public long firstForeign() { return firstForeign; }

    /** Why {@link #firstForeign()} is foreign (the same words in every scan of the format), "" if clean. */
    public String foreignReason() { return foreignReason; }

    /** Where scanning stopped: the buffer's length rounded down to 8. */
    public long scanEnd() { return scanEnd; }

    /** True when a foreign word ended the clean data. */
    public boolean damaged() { return firstForeign >= 0; }

    /** Record {@code i}'s type, 1..9. */
    public int type(int i) { return Byte.toUnsignedInt(types[check(i)]); }

    /** Record {@code i}'s flags (only {@link Layout#FLAG_LARGE} can be set). */
    public int flags(int i) { return Byte.toUnsignedInt(flags[check(i)]); }

    /** Record {@code i}'s user record type (u16). */
    public int userType(int i) { return Short.toUnsignedInt(userTypes[check(i)]); }

    /** Record {@code i}'s body length in bytes; the body lies within the buffer. */
    public int bodyLength(int i) { return bodyLengths[check(i)]; }

    /** Record {@code i}'s count (u32; PREPARE/COMMIT/ROLLBACK only). */
    public long count(int i) { return Integer.toUnsignedLong(counts[check(i)]); }

    /** Record {@code i}'s record id (u64, read unsigned). */
    public long recordId(int i) { return recordIds[check(i)]; }

    /** Record {@code i}'s tx id (u64, read unsigned). */
    public long txId(int i) { return txIds[check(i)]; }

    /** Where record {@code i} starts in the buffer (8-aligned). */
    public long offset(int i) { return offsets[check(i)]; }

    /** Where record {@code i}'s body starts in the buffer. */
    public long bodyOffset(int i) { return offsets[check(i)] + Layout.RECORD_HEADER_SIZE; }

    private int check(int i) {
        if (i < 0 || i >= n) {
            throw new IndexOutOfBoundsException("record " + i + " of " + n);
        }
        return i;
    }

    @Override
    public String toString() {
        return "ScanResult(n=" + n + ", n_clean=" + nClean + ", clean_end=" + cleanEnd
                + ", first_foreign=" + firstForeign + ", foreign_reason='" + foreignReason
                + "', scan_end=" + scanEnd + ")";
    }
}
