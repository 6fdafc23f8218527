package io.sparkjournal.spark;

import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Some rows of another column vector, in the order given, without copying:
 * row {@code i} of this vector is row {@code rows[i]} of the base. Works for
 * every type, nested ones included: values are read through the base's
 * accessors, and a struct's fields are the base's children seen through the
 * same rows (ColumnVector's own struct, interval, variant and nanosecond
 * accessors go through {@link #getChild}); an array or map is the base's
 * (its elements are addressed by offsets, not by row).
 *
 * <p>Valid exactly as long as the base's values are (for a Parquet reader's
 * batch: until its next batch). Closing it does not close the base: the base's
 * owner does.
 */
final class SelectedRows extends ColumnVector {

    private final ColumnVector base;
    private final int[] rows;
    private final ColumnVector[] children;
    private int nulls = -1;

    /** {@code rows}: indices into {@code base}, each below its row count. */
    SelectedRows(ColumnVector base, int[] rows) {
        super(base.dataType());
        this.base = base;
        this.rows = rows;
        this.children = new ColumnVector[childCount(base)];
    }

    private static int childCount(ColumnVector base) {
        if (base.dataType() instanceof org.apache.spark.sql.types.StructType struct) {
            return struct.fields().length;
        }
        return 3;          // interval (3), variant (2), timestamp nanos (2): fetched on demand
    }

    @Override
    public void close() {
        // the base belongs to its reader
    }

    @Override
    public boolean hasNull() {
        return numNulls() > 0;
    }

    @Override
    public int numNulls() {
        if (nulls < 0) {
            int found = 0;
            if (base.hasNull()) {
                for (int row : rows) {
                    if (base.isNullAt(row)) {
                        found++;
                    }
                }
            }
            nulls = found;
        }
        return nulls;
    }

    @Override
    public boolean isNullAt(int rowId) {
        return base.isNullAt(rows[rowId]);
    }

    @Override
    public boolean getBoolean(int rowId) {
        return base.getBoolean(rows[rowId]);
    }

    @Override
    public byte getByte(int rowId) {
        return base.getByte(rows[rowId]);
    }

    @Override
    public short getShort(int rowId) {
        return base.getShort(rows[rowId]);
    }

    @Override
    public int getInt(int rowId) {
        return base.getInt(rows[rowId]);
    }

    @Override
    public long getLong(int rowId) {
        return base.getLong(rows[rowId]);
    }

    @Override
    public float getFloat(int rowId) {
        return base.getFloat(rows[rowId]);
    }

    @Override
    public double getDouble(int rowId) {
        return base.getDouble(rows[rowId]);
    }

    @Override
    public ColumnarArray getArray(int rowId) {
        return base.getArray(rows[rowId]);
    }

    @Override
    public ColumnarMap getMap(int rowId) {
        return base.getMap(rows[rowId]);
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
        return base.getDecimal(rows[rowId], precision, scale);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
        return base.getUTF8String(rows[rowId]);
    }

    @Override
    public byte[] getBinary(int rowId) {
        return base.getBinary(rows[rowId]);
    }

    @Override
    public ColumnVector getChild(int ordinal) {
        if (ordinal >= children.length) {
            return new SelectedRows(base.getChild(ordinal), rows);
        }
        if (children[ordinal] == null) {
            children[ordinal] = new SelectedRows(base.getChild(ordinal), rows);
        }
        return children[ordinal];
    }
}
