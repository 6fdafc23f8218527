package io.sparkjournal.spark;

import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.util.ArrowUtils;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A stored record's flat Arrow vector (booleans, integers, floats, dates,
 * microsecond times, strings, binaries) as Spark reads it, straight from the
 * vector's memory: the record's mapped bytes. Arrow Java checks bounds and
 * the buffer's reference count on every value it reads; here the bounds are
 * checked once, when the column is made ({@link #of}: every buffer holds its
 * rows, every string's offsets rise and stay inside the data), so a tampered
 * body whose CRC still matches fails the read there instead of reading
 * outside the mapping, and each value is then one load. A short string
 * column's rows are handed out as the read's {@link StringDictionary} strings
 * when it gains (one shared on-heap copy per distinct value), else straight
 * from memory.
 *
 * The memory belongs to the reader's snapshot: the column is valid while the
 * batch Spark is reading is, and nothing in it can be moved or freed by Spark
 * (see {@link BorrowedColumn}, which serves every other type).
 */
final class DirectColumn extends ColumnVector {

    private enum Kind { BOOLEAN, BYTE, SHORT, INT, LONG, FLOAT, DOUBLE, STRING }

    private final int nulls;
    private final long validity;            // address of the validity bits (unused when nulls == 0)
    private final long data;
    private final long offsets;             // strings and binaries: address of rows + 1 int offsets
    private final int rows;
    private StringDictionary dictionary;    // strings: the read's, until the rows are looked up in it
    private UTF8String[] shared;            // the rows as the dictionary's strings, when it gains

    private DirectColumn(FieldVector vector, DataType type, int nulls, long offsets,
                         StringDictionary dictionary) {
        super(type);
        this.nulls = nulls;
        this.rows = vector.getValueCount();
        this.dictionary = dictionary;
        this.validity = vector.getValidityBuffer().memoryAddress();
        this.data = vector.getDataBuffer().memoryAddress();
        this.offsets = offsets;
    }

    /**
     * The vector as a column of Spark type {@code type} read straight from
     * memory; through Arrow for the other types, or where the record stored
     * the column as another type than {@code type}. A string column's rows
     * are looked up in {@code dictionary} (the read's for this column, or
     * null) when Spark first asks for one.
     */
    static ColumnVector of(FieldVector vector, DataType type, StringDictionary dictionary) {
        Kind kind = kindOf(vector);
        if (kind == null || !ArrowUtils.fromArrowField(vector.getField()).equals(type)) {
            return new BorrowedColumn(new ArrowColumnVector(vector));
        }
        int rows = vector.getValueCount();
        int nulls = vector.getNullCount();           // counted over the validity bits: once
        if (nulls > 0) {
            holds(vector, vector.getValidityBuffer(), (rows + 7L) / 8, "validity bits");
        }
        if (kind == Kind.STRING) {
            ArrowBuf offsetBuffer = vector.getOffsetBuffer();
            holds(vector, offsetBuffer, 4L * (rows + 1), "offsets");
            checkOffsets(vector, offsetBuffer.memoryAddress(), rows, vector.getDataBuffer().capacity());
            return new DirectColumn(vector, type, nulls, offsetBuffer.memoryAddress(), dictionary);
        }
        long width = kind == Kind.BOOLEAN ? -1 : ((BaseFixedWidthVector) vector).getTypeWidth();
        holds(vector, vector.getDataBuffer(), width < 0 ? (rows + 7L) / 8 : width * rows, "values");
        return new DirectColumn(vector, type, nulls, 0, null);
    }

    private static Kind kindOf(FieldVector vector) {
        if (vector instanceof BitVector) {
            return Kind.BOOLEAN;
        } else if (vector instanceof TinyIntVector) {
            return Kind.BYTE;
        } else if (vector instanceof SmallIntVector) {
            return Kind.SHORT;
        } else if (vector instanceof IntVector || vector instanceof DateDayVector) {
            return Kind.INT;
        } else if (vector instanceof BigIntVector || vector instanceof TimeStampMicroTZVector
                || vector instanceof TimeStampMicroVector) {
            return Kind.LONG;
        } else if (vector instanceof Float4Vector) {
            return Kind.FLOAT;
        } else if (vector instanceof Float8Vector) {
            return Kind.DOUBLE;
        } else if (vector instanceof VarCharVector || vector instanceof VarBinaryVector) {
            return Kind.STRING;
        }
        return null;
    }

    private static void holds(FieldVector vector, ArrowBuf buffer, long needed, String what) {
        if (buffer.capacity() < needed) {
            throw new IllegalStateException("a stored record's column " + vector.getName() + " has "
                    + buffer.capacity() + " bytes of " + what + " for " + vector.getValueCount()
                    + " rows, which need " + needed + ": the record body is damaged");
        }
    }

    private static void checkOffsets(FieldVector vector, long address, int rows, long dataBytes) {
        int previous = Platform.getInt(null, address);
        if (previous < 0) {
            throw damagedOffsets(vector, 0, previous, dataBytes);
        }
        for (int i = 1; i <= rows; i++) {
            int next = Platform.getInt(null, address + 4L * i);
            if (next < previous || next > dataBytes) {
                throw damagedOffsets(vector, i, next, dataBytes);
            }
            previous = next;
        }
    }

    private static IllegalStateException damagedOffsets(FieldVector vector, int row, int offset, long dataBytes) {
        return new IllegalStateException("a stored record's column " + vector.getName() + " has offset "
                + offset + " at row " + row + ", outside its " + dataBytes
                + " bytes of values or before the row's start: the record body is damaged");
    }

    @Override
    public void close() {
        // the reader frees the record's vectors when it moves on
    }

    @Override
    public boolean hasNull() {
        return nulls > 0;
    }

    @Override
    public int numNulls() {
        return nulls;
    }

    @Override
    public boolean isNullAt(int rowId) {
        return nulls > 0 && (Platform.getByte(null, validity + (rowId >> 3)) & (1 << (rowId & 7))) == 0;
    }

    @Override
    public boolean getBoolean(int rowId) {
        return (Platform.getByte(null, data + (rowId >> 3)) & (1 << (rowId & 7))) != 0;
    }

    @Override
    public byte getByte(int rowId) {
        return Platform.getByte(null, data + rowId);
    }

    @Override
    public short getShort(int rowId) {
        return Platform.getShort(null, data + 2L * rowId);
    }

    @Override
    public int getInt(int rowId) {
        return Platform.getInt(null, data + 4L * rowId);
    }

    @Override
    public long getLong(int rowId) {
        return Platform.getLong(null, data + 8L * rowId);
    }

    @Override
    public float getFloat(int rowId) {
        return Platform.getFloat(null, data + 4L * rowId);
    }

    @Override
    public double getDouble(int rowId) {
        return Platform.getDouble(null, data + 8L * rowId);
    }

    @Override
    public UTF8String getUTF8String(int rowId) {
        if (dictionary != null) {
            shared = dictionary.rowsOf(this, data, offsets, rows);
            dictionary = null;
        }
        if (shared != null) {
            return shared[rowId];
        }
        if (isNullAt(rowId)) {
            return null;
        }
        return UTF8String.fromAddress(null, valueAddress(rowId), valueLength(rowId));
    }

    @Override
    public byte[] getBinary(int rowId) {
        if (isNullAt(rowId)) {
            return null;
        }
        byte[] bytes = new byte[valueLength(rowId)];
        Platform.copyMemory(null, valueAddress(rowId), bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length);
        return bytes;
    }

    /** Where a string or binary row's bytes start (its offsets were checked in {@link #of}). */
    private long valueAddress(int rowId) {
        return data + Platform.getInt(null, offsets + 4L * rowId);
    }

    private int valueLength(int rowId) {
        return Platform.getInt(null, offsets + 4L * rowId + 4) - Platform.getInt(null, offsets + 4L * rowId);
    }

    @Override
    public Decimal getDecimal(int rowId, int precision, int scale) {
        throw new UnsupportedOperationException("a " + dataType().simpleString() + " column has no decimals");
    }

    @Override
    public ColumnarArray getArray(int rowId) {
        throw new UnsupportedOperationException("a " + dataType().simpleString() + " column has no arrays");
    }

    @Override
    public ColumnarMap getMap(int rowId) {
        throw new UnsupportedOperationException("a " + dataType().simpleString() + " column has no maps");
    }

    @Override
    public ColumnVector getChild(int ordinal) {
        throw new UnsupportedOperationException("a " + dataType().simpleString() + " column has no children");
    }
}
