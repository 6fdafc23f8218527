package io.sparkjournal.events;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The Arrow size S of Arrow Java vectors: EVENTS.md's "Arrow size" of a
 * column, informative in "Pieces" (a batch is cut by the sum of its columns'
 * sizes) and in "Statistics" (a string column gets min/max only when its size
 * in the piece passes the short-string test). Both are what today's writers
 * choose, not reader requirements; tests/test_jvm_events_body_agreement.py
 * holds the JVM and Python writers to the same pieces and statistics.
 */
public final class ArrowBytes {

    private ArrowBytes() {
    }

    /**
     * The Arrow size of all rows of {@code root}: the sum of its columns'
     * {@link #of}, the S a batch is cut by (EVENTS.md, "Pieces").
     */
    public static long of(VectorSchemaRoot root) {
        long total = 0;
        for (FieldVector vector : root.getFieldVectors()) {
            total += of(vector, 0, root.getRowCount());
        }
        return total;
    }

    /**
     * The Arrow size of rows [start, start + length) of {@code vector}. For a
     * string column this is EVENTS.md's S ("Statistics", informative):
     * {@code length * offset width} (4 for string, 8 for large_string; not
     * length + 1) plus the data bytes the rows span, plus, only when the whole
     * vector (the batch's column) holds a null, the validity bytes its rows
     * touch, {@code ceil((start + length) / 8) - floor(start / 8)}. Other types
     * follow the same measure (the bytes the rows reference): fixed-width
     * values {@code length * width} (bools as a bitmap); lists and maps their
     * offsets plus the child rows they span; a fixed-size list its child rows;
     * a struct only its children (its own bitmap is not counted); the null
     * type nothing; each with the validity bytes above where it holds a null.
     */
    public static long of(FieldVector vector, long start, long length) {
        long total = vector.getNullCount() > 0 ? bitmapBytes(start, length) : 0;
        if (vector instanceof org.apache.arrow.vector.NullVector) {
            return 0;
        }
        if (vector instanceof org.apache.arrow.vector.complex.StructVector) {
            total = 0;
            for (FieldVector child : vector.getChildrenFromFields()) {
                total += of(child, start, length);
            }
            return total;
        }
        if (vector instanceof org.apache.arrow.vector.BitVector) {
            return total + bitmapBytes(start, length);
        }
        if (vector instanceof org.apache.arrow.vector.BaseFixedWidthVector fixed) {
            return total + length * fixed.getTypeWidth();
        }
        if (vector instanceof BaseVariableWidthVector
                || vector instanceof BaseLargeVariableWidthVector) {
            int width = vector instanceof BaseVariableWidthVector ? 4 : 8;
            return total + length * width + span(vector, start, length, width)[1];
        }
        if (vector instanceof org.apache.arrow.vector.complex.ListVector
                || vector instanceof org.apache.arrow.vector.complex.LargeListVector) {
            int width = vector instanceof org.apache.arrow.vector.complex.ListVector ? 4 : 8;
            long[] child = span(vector, start, length, width);
            return total + length * width
                    + of(vector.getChildrenFromFields().get(0), child[0], child[1]);
        }
        if (vector instanceof org.apache.arrow.vector.complex.FixedSizeListVector list) {
            long size = list.getListSize();
            return total + of(vector.getChildrenFromFields().get(0), start * size,
                    length * size);
        }
        throw new IllegalArgumentException("no Arrow size rule for a "
                + vector.getField().getType() + " column (" + vector.getName() + ")");
    }

    private static long bitmapBytes(long start, long length) {
        return (start + length + 7) / 8 - start / 8;
    }

    /** {first offset, offsets[start + length] - offsets[start]} of an offsets buffer. */
    private static long[] span(FieldVector vector, long start, long length, int width) {
        if (vector.getValueCount() == 0) {
            return new long[] {0, 0};
        }
        ArrowBuf offsets = vector.getOffsetBuffer();
        long first = width == 4 ? offsets.getInt(start * 4) : offsets.getLong(start * 8);
        long end = width == 4 ? offsets.getInt((start + length) * 4)
                : offsets.getLong((start + length) * 8);
        return new long[] {first, end - first};
    }
}
