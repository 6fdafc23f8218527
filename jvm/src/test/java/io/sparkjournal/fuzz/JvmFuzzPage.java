package io.sparkjournal.fuzz;

import io.sparkjournal.events.Deletions;
import io.sparkjournal.events.PageRef;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The {@code page} case of {@link JvmFuzz} (fuzz target jvm_page,
 * tests/fuzz/fuzz_jvm_page.py): a PAGE record body decoded by
 * {@link PageRef#decode}, then its page file's rows read by the connector's
 * page reader ({@code io.sparkjournal.spark.PageBatches}, Spark's vectorized
 * Parquet reader) with no deletions, over every record id. Kept apart from
 * JvmFuzz so the other cases run without Spark's classes on the classpath;
 * this one needs {@code <pyspark>/jars/*}. Not an API.
 *
 * <p>The columns read: id (long), payload (string), _batch_id (long),
 * _commit_time (timestamp, as microseconds), _host and _lane (restated as
 * "h" and "l"), _record_id (long), _row (int); the journal's events columns
 * (which the page's footer is checked against) are id and payload. Digest: the PageRef's fields,
 * then one item a row, {@code <ordinal>:<cells joined by |>}, a string cell
 * as {@code <length>:<CRC-32C of its bytes>}, a null as {@code null}: the
 * strings fuzz_jvm_page.py builds from Python's reading.
 *
 * <p>PageBatches is package-private: it is called by reflection, and an
 * exception it throws reaches the caller as itself (an IOException is a
 * refusal, anything else a finding).
 */
final class JvmFuzzPage {

    static final StructType COLUMNS = DataTypes.createStructType(new org.apache.spark.sql.types.StructField[] {
        DataTypes.createStructField("id", DataTypes.LongType, true),
        DataTypes.createStructField("payload", DataTypes.StringType, true),
        DataTypes.createStructField("_batch_id", DataTypes.LongType, true),
        DataTypes.createStructField("_commit_time", DataTypes.TimestampType, true),
        DataTypes.createStructField("_host", DataTypes.StringType, true),
        DataTypes.createStructField("_lane", DataTypes.StringType, true),
        DataTypes.createStructField("_record_id", DataTypes.LongType, true),
        DataTypes.createStructField("_row", DataTypes.IntegerType, true),
    });

    static final List<String> EVENTS = List.of("id", "payload");

    private static Method open;
    private static Method next;
    private static Method batch;
    private static Method close;

    private JvmFuzzPage() {
    }

    /** The PageRef of the body in {@code bodyFile} and the rows of its page in the lane folder {@code lane}. */
    static List<String> page(String bodyFile, String lane) throws IOException {
        PageRef ref = PageRef.decode(ByteBuffer.wrap(Files.readAllBytes(Paths.get(bodyFile))));
        List<String> digest = new ArrayList<>();
        StringBuilder head = new StringBuilder("ref:").append(ref.name()).append('|')
                .append(Long.toUnsignedString(ref.size())).append('|').append(ref.crc32c()).append('|')
                .append(Long.toUnsignedString(ref.rows())).append('|');
        long[] ids = ref.recordIds();
        for (int i = 0; i < ids.length; i++) {
            head.append(i > 0 ? "," : "").append(Long.toUnsignedString(ids[i]));
        }
        head.append('|').append(ref.batchRange()[0]).append(',').append(ref.batchRange()[1])
                .append('|').append(ref.timeRange()[0]).append(',').append(ref.timeRange()[1]);
        digest.add(head.toString());
        bind();
        Object page = call(open, null, Paths.get(lane), ref, COLUMNS, EVENTS, new Deletions(), "h", "l", 0L, Long.MAX_VALUE);
        try {
            long ordinal = 0;
            while ((Boolean) call(next, page)) {
                ColumnarBatch rows = (ColumnarBatch) call(batch, page);
                for (int r = 0; r < rows.numRows(); r++) {
                    StringBuilder item = new StringBuilder().append(ordinal++).append(':');
                    for (int c = 0; c < COLUMNS.fields().length; c++) {
                        item.append(c > 0 ? "|" : "").append(cell(rows.column(c), COLUMNS.fields()[c].dataType(), r));
                    }
                    digest.add(item.toString());
                }
            }
        } finally {
            call(close, page);
        }
        return digest;
    }

    private static String cell(ColumnVector column, DataType type, int r) {
        if (column.isNullAt(r)) {
            return "null";
        }
        if (type == DataTypes.StringType) {
            byte[] bytes = column.getUTF8String(r).getBytes();
            CRC32C crc = new CRC32C();
            crc.update(bytes);
            return bytes.length + ":" + crc.getValue();
        }
        if (type == DataTypes.IntegerType) {
            return Integer.toString(column.getInt(r));
        }
        return Long.toString(column.getLong(r));
    }

    private static synchronized void bind() {
        if (open != null) {
            return;
        }
        try {
            Class<?> pages = Class.forName("io.sparkjournal.spark.PageBatches");
            Method opening = pages.getDeclaredMethod("open", Path.class, PageRef.class, StructType.class,
                    List.class, Deletions.class, String.class, String.class, long.class, long.class);
            next = pages.getDeclaredMethod("next");
            batch = pages.getDeclaredMethod("batch");
            close = pages.getDeclaredMethod("close");
            for (Method method : new Method[] {opening, next, batch, close}) {
                method.setAccessible(true);
            }
            open = opening;
        } catch (ReflectiveOperationException missing) {
            throw new IllegalStateException("the connector has no PageBatches.open/next/batch/close to fuzz", missing);
        }
    }

    /** The method's result; what it threw, thrown as itself. */
    private static Object call(Method method, Object target, Object... args) throws IOException {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException thrown) {
            Throwable cause = thrown.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(cause);
        } catch (IllegalAccessException denied) {
            throw new IllegalStateException(denied);
        }
    }
}
