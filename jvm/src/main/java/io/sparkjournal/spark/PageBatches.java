package io.sparkjournal.spark;

import io.sparkjournal.format.Constants;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.FileSplit;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.execution.datasources.parquet.ParquetReadSupport;
import org.apache.spark.sql.execution.datasources.parquet.VectorizedParquetRecordReader;
import org.apache.spark.sql.execution.vectorized.ConstantColumnVector;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

import io.sparkjournal.events.Deletions;
import io.sparkjournal.events.PageRef;

/**
 * One page file's visible rows as batches of a read's output columns
 * (EVENTS.md, "PAGE records and page files", reader requirements), over the
 * record ids {@code [firstId, endId)} (a whole lane, or a stream's
 * micro-batch: a page straddling the range's ends is cut to it by each row's
 * {@code _record_id}).
 *
 * <p>The file is read by Spark's own vectorized Parquet reader
 * ({@link VectorizedParquetRecordReader}, the one {@code spark.read.parquet}
 * uses, so types decode exactly as Spark decodes Parquet), asked for the
 * output's columns by name (case-sensitive; EVENTS.md: matched by name): an
 * events column the page predates reads as nulls; {@code _batch_id},
 * {@code _commit_time}, {@code _record_id} and {@code _row} are the page's
 * own; {@code _host} and {@code _lane} are restated from the read (one
 * constant each), never taken from the file. Parquet's page checksums,
 * written by paging, are verified. Only the columns
 * asked for are decoded, plus {@code _record_id} and {@code _row} when the
 * lane's deletions name any of the page's records: a row whose
 * ({@code _record_id}, {@code _row}) {@link Deletions#isDeleted} is dropped
 * by a {@link SelectedRows} view (no copy), a batch with no row left is
 * skipped.
 *
 * <p>Failures, each a {@link PageFileException} naming the lane and the file:
 * the file missing, its size not its PAGE record's (checked before it is
 * opened; the CRC-32C of the whole file is not: EVENTS.md does not require
 * it of a reader), its footer disagreeing with the PAGE record or the
 * journal's events columns ({@link #checkFooter}, before any row is read:
 * Spark's reader, asked for columns by name, would read a column the footer
 * lost, a renamed {@code _row} or {@code id}, as nulls or no rows in
 * silence), or its contents not decoding (damage, a checksum mismatch, a
 * column of another type than the journal's).
 *
 * <p>A page dropped mid-read: paging removes a page file (an orphan: a
 * dropped page, or an abandoned one) only under the lane's {@code files.lock}
 * held exclusive, and the lane's snapshot holds it shared until the task's
 * reader closes (FileSetLock), so a page its live PAGE records name stays.
 * Where no lock could be held (a lane whose lock file this process may not
 * read) a page may still go between the snapshot's load and this open;
 * paging never rewrites a page file in place (it publishes by rename, then
 * only removes), so the file is then either whole or absent. Absent: the open
 * fails with the PageFileException saying it is gone and that the read can
 * be run again. Once open (the reader opens the file at once, in
 * {@link #open}), Linux keeps an unlinked file's bytes for its open handle,
 * so the page is read whole. A page's rows are never left out in silence.
 *
 * <p>Each batch is valid until the next {@link #next} (Spark's rule); close
 * releases the reader and its vectors.
 */
final class PageBatches implements AutoCloseable {

    /** Rows per batch: Spark's default spark.sql.parquet.columnarReaderBatchSize. */
    static final int ROWS_PER_BATCH = 4096;
    static final String RECORD_ID = Constants.MetadataColumns.RECORD_ID;
    static final String ROW = Constants.MetadataColumns.ROW;

    private final VectorizedParquetRecordReader reader;
    private final Path file;
    private final String where;
    private final StructType output;
    private final int[] sources;             // output column -> column read, -1: a constant of the read
    private final int recordIds;             // columns read holding _record_id and _row (-1: not read)
    private final int rows;
    private final Deletions deletions;       // null: none of the page's records has a deletion
    private final long firstId;
    private final long endId;
    private final boolean cut;               // the page straddles [firstId, endId): rows checked by id
    private final String host;
    private final String lane;
    private final long checkedBytes;         // read whole for the CRC at the open (PageFileCheck)
    private ColumnarBatch current;

    private PageBatches(VectorizedParquetRecordReader reader, Path file, String where, StructType output,
                        int[] sources, int recordIds, int rows, Deletions deletions, String host, String lane,
                        long firstId, long endId, boolean cut, long checkedBytes) {
        this.reader = reader;
        this.checkedBytes = checkedBytes;
        this.file = file;
        this.where = where;
        this.output = output;
        this.sources = sources;
        this.recordIds = recordIds;
        this.rows = rows;
        this.deletions = deletions;
        this.host = host;
        this.lane = lane;
        this.firstId = firstId;
        this.endId = endId;
        this.cut = cut;
    }

    /**
     * Opens page {@code ref} of the lane folder {@code laneDir}, for the
     * {@code output} columns; {@code eventsColumns}: the names of the
     * journal's events columns, in order (the footer's are checked against
     * them, {@link #checkFooter}); {@code deletions}: the lane's (read only);
     * {@code host}, {@code lane}: the read's {@code _host} and {@code _lane};
     * only rows of records in {@code [firstId, endId)}.
     */
    static PageBatches open(Path laneDir, PageRef ref, StructType output, List<String> eventsColumns,
                            Deletions deletions, String host, String lane, long firstId, long endId)
            throws IOException {
        Path file = ref.path(laneDir);
        String where = "lane " + laneDir + ": page file " + file;
        long size;
        try {
            size = Files.size(file);
        } catch (NoSuchFileException missing) {
            throw gone(where);
        }
        if (size != ref.size()) {
            throw new PageFileException(where + " holds " + size + " bytes, its PAGE record says " + ref.size()
                    + ": it was changed after paging; restore it from a backup");
        }
        long checkedBytes = PageFileCheck.check(file, where, ref, eventsColumns, size);
        boolean deleting = false;
        for (long recordId : ref.recordIds()) {
            deleting |= deletions.contains(recordId);
        }
        List<StructField> read = new ArrayList<>();
        int[] sources = new int[output.fields().length];
        for (int i = 0; i < sources.length; i++) {
            StructField field = output.fields()[i];
            boolean constant = field.name().equals(Constants.MetadataColumns.HOST)
                    || field.name().equals(Constants.MetadataColumns.LANE);
            sources[i] = constant ? -1 : read.size();
            if (!constant) {
                read.add(new StructField(field.name(), field.dataType(), true, Metadata.empty()));
            }
        }
        boolean cut = cuts(ref.firstId(), ref.lastId(), firstId, endId);
        int recordIds = deleting || cut ? indexOrAdd(read, RECORD_ID, DataTypes.LongType) : -1;
        int rows = deleting ? indexOrAdd(read, ROW, DataTypes.IntegerType) : -1;
        VectorizedParquetRecordReader reader = new VectorizedParquetRecordReader(
                null, "CORRECTED", "UTC", "CORRECTED", "UTC", false, ROWS_PER_BATCH);
        try {
            Configuration conf = configuration(new StructType(read.toArray(new StructField[0])));
            FileSplit split = new FileSplit(new org.apache.hadoop.fs.Path(file.toUri()), 0, size, new String[0]);
            reader.initialize(split, new TaskAttemptContextImpl(conf, new TaskAttemptID()));
            reader.initBatch(new StructType(), new GenericInternalRow(0));
        } catch (FileNotFoundException missing) {
            reader.close();
            throw gone(where);
        } catch (IOException | InterruptedException | RuntimeException bad) {
            reader.close();
            throw new PageFileException(where + " does not read as the page its PAGE record names: " + bad, bad);
        }
        return new PageBatches(reader, file, where, output, sources, recordIds, rows,
                deleting ? deletions : null, host, lane, firstId, endId, cut, checkedBytes);
    }


    static PageFileException gone(String where) {
        return new PageFileException(where + ", named by a live PAGE record, is missing: either maintenance "
                + "dropped the page after this read's snapshot was taken (the JVM reader holds no files.lock; "
                + "run the read again), or it was lost (restore it from a backup: its records were moved into it)");
    }

    private static int indexOrAdd(List<StructField> read, String name, DataType type) {
        for (int i = 0; i < read.size(); i++) {
            if (read.get(i).name().equals(name)) {
                return i;
            }
        }
        read.add(new StructField(name, type, true, Metadata.empty()));
        return read.size() - 1;
    }

    /**
     * What Spark's Parquet reader needs of a Hadoop configuration, for a page
     * (Parquet with page checksums, EVENTS.md, "PAGE records"), on top of Hadoop's defaults parsed once per
     * JVM ({@link Defaults}): a fresh {@code new Configuration()} parses the
     * default XML resources again, searching every jar for them, on each page
     * opened.
     */
    private static Configuration configuration(StructType read) {
        Configuration conf = new Configuration(Defaults.HADOOP);
        conf.set("parquet.read.support.class", ParquetReadSupport.class.getName());
        conf.set(ParquetReadSupport.SPARK_ROW_REQUESTED_SCHEMA(), read.json());
        conf.set("spark.sql.caseSensitive", "true");                  // columns by exact name
        conf.set("spark.sql.parquet.binaryAsString", "false");
        conf.set("spark.sql.parquet.int96AsTimestamp", "true");
        conf.set("spark.sql.parquet.inferTimestampNTZ.enabled", "true");
        conf.set("spark.sql.legacy.parquet.nanosAsLong", "false");
        conf.set("parquet.page.verify-checksum.enabled", "true");     // paging writes page checksums
        return conf;
    }

    /** Moves to the page's next batch with a visible row; false at the end. */
    boolean next() throws IOException {
        current = null;
        try {
            while (reader.nextBatch()) {
                ColumnarBatch read = reader.resultBatch();
                int count = read.numRows();
                int[] kept = deletions == null && !cut ? null : survivors(read, count);
                if (kept != null && kept.length == 0) {
                    continue;
                }
                current = batch(read, kept != null && kept.length < count ? kept : null, count);
                return true;
            }
        } catch (IOException | RuntimeException bad) {
            throw new PageFileException(where + " does not read as the page its PAGE record names: " + bad, bad);
        }
        return false;
    }

    /** The page file's bytes read whole to check its CRC when it was opened: 0 or its size. */
    long checkedBytes() {
        return checkedBytes;
    }

    /** The current batch, valid until the next {@link #next}. */
    ColumnarBatch batch() {
        return current;
    }

    private int[] survivors(ColumnarBatch read, int count) {
        ColumnVector ids = read.column(recordIds);
        ColumnVector positions = deletions == null ? null : read.column(rows);
        int[] kept = new int[count];
        int n = 0;
        for (int i = 0; i < count; i++) {
            long id = ids.getLong(i);
            if (cut && (Long.compareUnsigned(id, firstId) < 0 || Long.compareUnsigned(id, endId) >= 0)) {
                continue;
            }
            if (deletions == null || !deletions.isDeleted(id, positions.getInt(i) & 0xffffffffL)) {
                kept[n++] = i;
            }
        }
        return java.util.Arrays.copyOf(kept, n);
    }

    private ColumnarBatch batch(ColumnarBatch read, int[] kept, int count) {
        int size = kept == null ? count : kept.length;
        ColumnVector[] columns = new ColumnVector[sources.length];
        for (int i = 0; i < sources.length; i++) {
            StructField field = output.fields()[i];
            if (sources[i] < 0) {
                columns[i] = constant(size, field.dataType(),
                        field.name().equals(Constants.MetadataColumns.HOST) ? host : lane);
            } else {
                ColumnVector column = read.column(sources[i]);
                columns[i] = kept == null ? column : new SelectedRows(column, kept);
            }
        }
        return new ColumnarBatch(columns, size);
    }

    private static ColumnVector constant(int size, DataType type, String value) {
        ConstantColumnVector vector = new ConstantColumnVector(size, type);
        if (value == null) {
            vector.setNull();
        } else {
            vector.setUtf8String(UTF8String.fromString(value));
        }
        return vector;
    }

    @Override
    public void close() throws IOException {
        current = null;
        reader.close();
    }

    @Override
    public String toString() {
        return "page " + file;
    }

    /** Hadoop's default configuration, loaded on first use and only copied after. */
    private static final class Defaults {
        static final Configuration HADOOP = loaded();

        private static Configuration loaded() {
            Configuration conf = new Configuration();
            conf.size();                            // parses the default resources now, once
            return conf;
        }
    }

    /**
     * Whether a page holding record ids {@code first .. last} reaches out of
     * the read's {@code [firstId, endId)}, so its rows must be checked by id.
     * Record ids are u64 (FORMAT.md): compared unsigned.
     */
    static boolean cuts(long first, long last, long firstId, long endId) {
        return Long.compareUnsigned(first, firstId) < 0 || Long.compareUnsigned(last, endId) >= 0;
    }
}
