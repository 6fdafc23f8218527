package io.sparkjournal.spark;

import io.sparkjournal.events.TaskWrite;
import io.sparkjournal.format.Layout;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.types.StructType;

/**
 * What every JVM task of one write needs, made and checked on the driver and
 * shipped to the tasks: the journal {@code path}, its journal {@code options}
 * RESOLVED (every journal option as declared once, in Python's config.py:
 * integers, booleans, strings), the commit log's URI and LOG_ID, the writer's {@code query} and
 * {@code batch}, the session {@code timezone} the rows' timestamps are
 * converted in, how many rows a chunk holds ({@code
 * spark.sql.execution.arrow.maxRecordsPerBatch}), the largest piece's body
 * ({@code event_records.piece_bytes}) and the rows' schema.
 */
record TaskPlan(String path, HashMap<String, Object> options, String logUri, String logId,
                String query, long batch, String timezone, int chunkRows, long maxBody,
                StructType schema) implements Serializable {

    /** event_records.RECORD_BYTES: the largest piece, where data files are large enough. */
    static final long RECORD_BYTES = 4L << 20;

    /** A plan; {@code chunkRows} at most 0 means no limit. */
    static TaskPlan of(String path, HashMap<String, Object> options, String logUri, String logId,
                       String query, long batch, String timezone, int chunkRows, StructType schema) {
        return new TaskPlan(path, options, logUri, logId, query, batch, timezone,
                chunkRows > 0 ? chunkRows : Integer.MAX_VALUE, maxBody(options), schema);
    }

    /** event_records.piece_bytes of the resolved options. */
    static long maxBody(Map<String, Object> options) {
        long fileSize = ((Number) options.get("fileSize")).longValue();
        long bufferSize = ((Number) options.get("bufferSize")).longValue();
        return Math.max(bufferSize, Math.min(RECORD_BYTES, (fileSize - Layout.FILE_HEADER_SIZE) / 4));
    }

    /** This plan for batch {@code batch} (a stream's epoch) of the same writer. */
    TaskPlan withBatch(long batch) {
        return new TaskPlan(path, options, logUri, logId, query, batch, timezone, chunkRows,
                maxBody, schema);
    }

    TaskWrite.Plan taskPlan() {
        return new TaskWrite.Plan(path, options, logUri, logId, query, batch);
    }
}
