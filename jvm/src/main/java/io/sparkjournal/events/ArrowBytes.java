package io.sparkjournal.events;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * pyarrow's {@code nbytes} of Arrow Java vectors: what Python's
 * {@code event_records.pieces} sizes pieces by and {@code pruning.column_stats}
 * tests string columns against, so the JVM cuts the same pieces and gives the
 * same columns statistics (tests/test_jvm_events_body_agreement.py).
 */
public final class ArrowBytes {

    private ArrowBytes() {
    }

    /**
     * pyarrow's {@code nbytes} of all rows of {@code root}: the sum of its
     * columns' {@link #of}, what event_records.pieces sizes pieces by.
     */
    public static long of(VectorSchemaRoot root) {
        long total = 0;
        for (FieldVector vector : root.getFieldVectors()) {
            total += of(vector, 0, root.getRowCount());
        }
        return total;
    }

    /**
     * pyarrow's {@code nbytes} (C++ ReferencedBufferSize) of rows [start, start +
     * length) of {@code vector}, as pyarrow counts the same values after they
     * crossed IPC: a validity bitmap exists only where the whole vector holds a
     * null (pyarrow's IPC reader drops it otherwise), and then counts the bytes
     * its rows touch, {@code ceil((start + length) / 8) - floor(start / 8)};
     * fixed-width values {@code length * width} (bools as a bitmap); variable
     * width ones {@code length * offset width} (not length + 1) plus the data
     * bytes the rows span; lists and maps their offsets plus the child rows they
     * span; a struct only its children (pyarrow does not count a struct's
     * bitmap); the null type nothing.
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
