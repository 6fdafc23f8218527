package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.format.FormatVersionException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Deletion vector bodies laid out as events/deletions.py writes them decode in
 *  {@link DeletionVector}; tampered ones are refused. */
public final class DeletionVectorTest {

    private DeletionVectorTest() {
    }

    public static void testPositionsAndTargetDecodeAsWrittenUnsigned() throws Exception {
        long[] positions = {0, 7, 0xFFFF_FFFFL};
        DeletionVector vector = DeletionVector.decode(body(-3L, 0, positions.length, positions), "r");
        equal(-3L, vector.target(), "target record id");
        isTrue(!vector.all(), "a vector of positions reads as ALL");
        equal(positions, vector.positions(), "positions");
    }

    public static void testAnAllVectorDeletesEveryRowWhateverItsCount() throws Exception {
        DeletionVector vector = DeletionVector.decode(body(12, DeletionVector.FLAG_ALL, 99,
                new long[0]), "r");
        isTrue(vector.all(), "an ALL vector reads as positions");
        equal(null, vector.positions(), "positions of an ALL vector");
        equal(12L, vector.target(), "target record id");
    }

    public static void testACountThatDisagreesWithTheBodyIsRefused() {
        ByteBuffer tampered = body(12, 0, 3, new long[]{1, 2});
        contains(raises(DeletionVectorException.class,
                () -> DeletionVector.decode(tampered, "r")).getMessage(),
                "says 3 positions but holds 2");
        ByteBuffer cut = body(12, 0, 0, new long[0]).limit(DeletionVector.HEAD_SIZE - 1);
        contains(raises(DeletionVectorException.class,
                () -> DeletionVector.decode(cut, "r")).getMessage(), "shorter than its header");
    }

    public static void testAnotherMagicIsRefusedAndANewerVersionNamesWhereItIs() {
        ByteBuffer other = body(12, 0, 0, new long[0]);
        other.put(3, (byte) 'X');
        contains(raises(DeletionVectorException.class,
                () -> DeletionVector.decode(other, "r")).getMessage(), "not a version 1");
        ByteBuffer newer = body(12, 0, 0, new long[0]);
        newer.put(4, (byte) 2);
        FormatVersionException refused = raises(FormatVersionException.class,
                () -> DeletionVector.decode(newer, "record 12 of lane /x"));
        equal("record 12 of lane /x", refused.path(), "where named");
        equal(2L, refused.found(), "version found");
    }

    /** A vector body laid out as DeletionVector's class comment (and events/deletions.py) says. */
    private static ByteBuffer body(long target, int flags, long count, long[] positions) {
        ByteBuffer out = ByteBuffer.allocate(DeletionVector.HEAD_SIZE + 4 * positions.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        out.put(DeletionVector.MAGIC).put((byte) DeletionVector.VERSION).put((byte) flags)
                .putShort((short) 0).putLong(target).putInt((int) count);
        for (long position : positions) {
            out.putInt((int) position);
        }
        return out.flip();
    }
}
