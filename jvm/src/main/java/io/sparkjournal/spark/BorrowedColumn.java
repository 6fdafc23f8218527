package io.sparkjournal.spark;

import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A stored record's Arrow vector as Spark reads it, without letting Spark
 * take its buffers. Spark's Arrow-optimized Python UDFs (ArrowEvalPython)
 * consume an ArrowColumnVector input by moving its Arrow buffers into their
 * own writer, after which the rows Spark joins back read an emptied vector
 * (IndexOutOfBoundsException on the validity buffer). The buffers here are
 * views of the lane's memory map that the reader owns, so they are lent, not
 * given: every accessor reads through, nothing can move them.
 */
final class BorrowedColumn extends ColumnVector {

    private final ArrowColumnVector vector;

    BorrowedColumn(ArrowColumnVector vector) {
        super(vector.dataType());
        this.vector = vector;
    }

    @Override
    public void close() {
        // the reader closes the vectors when the task ends
    }

    @Override
    public boolean hasNull() {
        return vector.hasNull();
    }

    @Override
    public int numNulls() {
        return vector.numNulls();
    }

    @Override
    public boolean isNullAt(int rowId) {
        return vector.isNullAt(rowId);
    }

    @Override
    public boolean getBoolean(int rowId) {
        return vector.getBoolean(rowId);
    }

    @Override
    public byte getByte(int rowId) {
        return vector.getByte(rowId);
    }

    @Override
    public short getShort(int rowId) {
        return vector.getShort(rowId);
    }

    @Override
    public int getInt(int rowId) {
        return vector.getInt(rowId);
    }

    @Override
    public long getLong(int rowId) {
        return vector.getLong(rowId);
    }

    @Override
    public float getFloat(int rowId) {
        return vector.getFloat(rowId);
    }

    @Override
    public double getDouble(int rowId) {
        return vector.getDouble(rowId);
    }

    @Override
    public ColumnarArray getArray(int rowId) {
        return vector.getArray(rowId);
    }

    @Override
    public ColumnarMap getMap(int rowId) {
        return vector.getMap(rowId);
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
        return vector.getDecimal(rowId, precision, scale);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
        return vector.getUTF8String(rowId);
    }

    @Override
    public byte[] getBinary(int rowId) {
        return vector.getBinary(rowId);
    }

    @Override
    public ColumnVector getChild(int ordinal) {
        return vector.getChild(ordinal);
    }
}
