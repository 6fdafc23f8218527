package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.Shown;
import io.sparkjournal.format.FormatVersionException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * A deletion vector record's body (EVENTS.md, "Deletion vectors"; user type
 * {@link UserTypes#DELETION_VECTOR}), little-endian:
 *
 * <pre>
 * offset size field
 *  0      4   magic "SJDV"
 *  4      1   version, 1
 *  5      1   flags: bit 0 ALL (every row of the target; no positions follow)
 *  6      2   reserved, 0
 *  8      8   target record id (u64)
 * 16      4   n, the number of positions (u32)
 * 20     4n   original positions (u32), ascending, no repeats
 * </pre>
 *
 * Positions are original positions: a row's place in its record as first
 * written ({@link Deletions#ROW_COLUMN}). As EVENTS.md states: with ALL set, the
 * count and whatever follows are not looked at; other flag bits and the
 * reserved field are ignored; the positions' order is not checked (a union
 * does not need it).
 *
 * <p>Damage: a body shorter than its header, another magic, a version other
 * than 1, or a count that disagrees with the body's length is a
 * {@link DeletionVectorException}; the right magic with a version above 1 is a
 * {@link FormatVersionException} ("deletion vector {where} was written by a
 * newer sparkjournal ..."). Messages are this implementation's own; the
 * kinds are EVENTS.md's.
 */
public final class DeletionVector {

    public static final byte[] MAGIC = Constants.Magics.DELETION_VECTOR.getBytes(StandardCharsets.US_ASCII);
    public static final int VERSION = 1;
    public static final int FLAG_ALL = 0x01;
    public static final int HEAD_SIZE = 20;

    private final long target;
    private final long[] positions;

    private DeletionVector(long target, long[] positions) {
        this.target = target;
        this.positions = positions;
    }

    /**
     * The vector in {@code body} (position to limit); {@code where} names it in
     * a FormatVersionException ("record 12 of lane /x/lane-000").
     */
    public static DeletionVector decode(ByteBuffer body, String where)
            throws DeletionVectorException, FormatVersionException {
        ByteBuffer raw = body.slice().order(ByteOrder.LITTLE_ENDIAN);
        int size = raw.remaining();
        if (size < HEAD_SIZE) {
            throw new DeletionVectorException("a deletion vector of " + size
                    + " bytes is shorter than its header");
        }
        byte[] magic = new byte[4];
        raw.get(0, magic);
        boolean ours = java.util.Arrays.equals(magic, MAGIC);
        int version = raw.get(4) & 0xff;
        int flags = raw.get(5) & 0xff;
        long target = raw.getLong(8);
        long count = raw.getInt(16) & 0xffffffffL;
        if (ours && version > VERSION) {
            throw new FormatVersionException("deletion vector", where, version, VERSION);
        }
        if (!ours || version != VERSION) {
            throw new DeletionVectorException("not a version 1 deletion vector (magic "
                    + Shown.bytes(magic) + ", version " + version + ")");
        }
        if ((flags & FLAG_ALL) != 0) {
            return new DeletionVector(target, null);
        }
        if (size != HEAD_SIZE + 4 * count) {
            throw new DeletionVectorException("deletion vector for record "
                    + Long.toUnsignedString(target) + " says " + count + " positions but holds "
                    + (size - HEAD_SIZE) / 4);
        }
        long[] positions = new long[(int) count];
        for (int i = 0; i < positions.length; i++) {
            positions[i] = raw.getInt(HEAD_SIZE + 4 * i) & 0xffffffffL;
        }
        return new DeletionVector(target, positions);
    }

    /** The record whose rows it deletes (a u64 held in a long). */
    public long target() {
        return target;
    }

    /** Whether it deletes every row of the target. */
    public boolean all() {
        return positions == null;
    }

    /** The deleted original positions (0 .. 2^32 - 1) as written; null when {@link #all()}. */
    public long[] positions() {
        return positions == null ? null : positions.clone();
    }
}
