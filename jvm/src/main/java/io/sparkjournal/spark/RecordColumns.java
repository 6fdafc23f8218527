package io.sparkjournal.spark;

import io.sparkjournal.format.Constants;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

import io.sparkjournal.events.Deletions;

/**
 * One stored record's visible rows as the columns a read asked for
 * (EVENTS.md, "Reading: the columns"): an event column is the
 * record's own Arrow vector (no copy) or nulls where the record predates the
 * column; {@code _batch_id}, {@code _commit_time}, {@code _host},
 * {@code _lane}, {@code _record_id} are one constant per record; {@code _row}
 * is each row's original position in its record (the hidden {@code __sj_row}
 * column compaction keeps, else its index). Deleted rows are dropped by
 * copying the survivors, the one case that copies. A string column's
 * records share one {@link StringDictionary} for the read.
 */
final class RecordColumns {

    static final String ROW_COLUMN = Deletions.ROW_COLUMN;

    private final StructType output;
    private final StringDictionary[] dictionaries;  // per output string column, shared by its records

    RecordColumns(StructType output) {
        this.output = output;
        this.dictionaries = new StringDictionary[output.fields().length];
        for (int i = 0; i < dictionaries.length; i++) {
            if (output.fields()[i].dataType() instanceof StringType) {
                dictionaries[i] = new StringDictionary();
            }
        }
    }

    /** String values handed out as shared copies so far, over every column (SharedStringsMetric). */
    long sharedStringValues() {
        long shared = 0;
        for (StringDictionary dictionary : dictionaries) {
            shared += dictionary == null ? 0 : dictionary.valuesShared();
        }
        return shared;
    }

    /** A batch handed to Spark and the Arrow vectors under it, freed together. */
    record Loaded(ColumnarBatch batch, VectorSchemaRoot root) implements AutoCloseable {
        @Override
        public void close() {
            root.close();
        }
    }

    /**
     * The record's visible rows, or null when none is left. {@code deleted}:
     * sorted original positions deleted (empty: none; null: every row). Takes
     * over {@code root}: it is closed here, or by the result's close.
     */
    Loaded batch(VectorSchemaRoot root, RecordFacts facts, long[] deleted, BufferAllocator allocator) {
        int rows = root.getRowCount();
        BaseIntVector original = (BaseIntVector) root.getVector(ROW_COLUMN);
        if (deleted == null) {
            root.close();
            return null;
        }
        VectorSchemaRoot kept = root;
        int[] positions = null;                     // the output rows' original positions, when copied
        if (deleted.length > 0) {
            int[] survivors = survivors(rows, original, deleted);
            if (survivors.length == 0) {
                root.close();
                return null;
            }
            if (survivors.length < rows) {
                positions = new int[survivors.length];
                for (int i = 0; i < survivors.length; i++) {
                    positions[i] = (int) Deletions.originalPosition(original, survivors[i]);
                }
                kept = copyRows(root, survivors, allocator);
                root.close();
                rows = survivors.length;
                original = null;
            }
        }
        List<ColumnVector> columns = new ArrayList<>();
        StructField[] fields = output.fields();
        for (int i = 0; i < fields.length; i++) {
            columns.add(column(fields[i], kept, facts, rows, original, positions, dictionaries[i]));
        }
        return new Loaded(new ColumnarBatch(columns.toArray(new ColumnVector[0]), rows), kept);
    }

    private static ColumnVector column(StructField field, VectorSchemaRoot root, RecordFacts facts, int rows,
                                       BaseIntVector original, int[] positions, StringDictionary dictionary) {
        String name = field.name();
        DataType type = field.dataType();
        switch (name) {
            case Constants.MetadataColumns.BATCH_ID:
                return constantLong(rows, type, facts.batchId());
            case Constants.MetadataColumns.COMMIT_TIME:
                return constantLong(rows, type, facts.commitMicros());
            case Constants.MetadataColumns.RECORD_ID:
                return constantLong(rows, type, facts.recordId());
            case Constants.MetadataColumns.HOST:
                return constantString(rows, type, facts.host());
            case Constants.MetadataColumns.LANE:
                return constantString(rows, type, facts.lane());
            case Constants.MetadataColumns.ROW: {
                OnHeapColumnVector rowPositions = new OnHeapColumnVector(rows, type);
                for (int i = 0; i < rows; i++) {
                    rowPositions.putInt(i, positions != null ? positions[i]
                            : (int) Deletions.originalPosition(original, i));
                }
                return rowPositions;
            }
            default:
                if (root.getVector(name) == null) {
                    ConstantColumnVector nulls = new ConstantColumnVector(rows, type);
                    nulls.setNull();
                    return nulls;
                }
                return DirectColumn.of(root.getVector(name), type, dictionary);
        }
    }

    private static ColumnVector constantLong(int rows, DataType type, Long value) {
        ConstantColumnVector vector = new ConstantColumnVector(rows, type);
        if (value == null) {
            vector.setNull();
        } else {
            vector.setLong(value);
        }
        return vector;
    }

    private static ColumnVector constantString(int rows, DataType type, String value) {
        ConstantColumnVector vector = new ConstantColumnVector(rows, type);
        if (value == null) {
            vector.setNull();
        } else {
            vector.setUtf8String(UTF8String.fromString(value));
        }
        return vector;
    }

    /** Indices of the rows whose original position is not in {@code deleted} (sorted). */
    static int[] survivors(int rows, BaseIntVector original, long[] deleted) {
        int[] kept = new int[rows];
        int n = 0;
        for (int i = 0; i < rows; i++) {
            if (java.util.Arrays.binarySearch(deleted, Deletions.originalPosition(original, i)) < 0) {
                kept[n++] = i;
            }
        }
        return java.util.Arrays.copyOf(kept, n);
    }

    private static VectorSchemaRoot copyRows(VectorSchemaRoot root, int[] rows, BufferAllocator allocator) {
        List<FieldVector> copies = new ArrayList<>();
        for (FieldVector vector : root.getFieldVectors()) {
            TransferPair pair = vector.getTransferPair(allocator);
            FieldVector copy = (FieldVector) pair.getTo();
            copy.setInitialCapacity(rows.length);
            copy.allocateNew();
            for (int i = 0; i < rows.length; i++) {
                pair.copyValueSafe(rows[i], i);
            }
            copy.setValueCount(rows.length);
            copies.add(copy);
        }
        return new VectorSchemaRoot(root.getSchema().getFields(), copies, rows.length);
    }
}
