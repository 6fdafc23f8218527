package io.sparkjournal.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

import io.sparkjournal.events.LaneEvents;
import io.sparkjournal.events.VisibleRecord;

/**
 * Reads one lane on the executor as columnar batches, one per visible stored
 * record, in the Python scan's order (sparkjournal/events/lane_scan.py).
 *
 * Before anything is read the lane's root must carry the partition's node id
 * ({@link LaneEvents#open} fails otherwise, and Spark retries the task
 * elsewhere). Records whose metadata and min/max rule out every pushed
 * filter are skipped unopened. A damaged record fails the task naming file
 * and offset, or under skipCorrupt its file is left out and reported. The
 * batch handed to Spark is valid until the next call, as Spark requires;
 * everything is released on close.
 */
final class LaneBatchReader implements PartitionReader<ColumnarBatch> {

    private final LanePartition partition;
    private final List<RecordFilter> filters;
    private final RecordColumns columns;
    private final BufferAllocator allocator = new RootAllocator();
    private final LaneEvents events;
    private final Iterator<VisibleRecord> records;
    private final String lane;
    private RecordColumns.Loaded current;

    LaneBatchReader(LanePartition partition, ReadOptions options, StructType output, List<RecordFilter> filters,
                    String logBase) {
        this.partition = partition;
        this.filters = filters;
        this.columns = new RecordColumns(output);
        this.lane = Path.of(partition.lane()).getFileName().toString();
        try {
            this.events = LaneEvents.open(Path.of(partition.lane()), partition.node(), Path.of(logBase),
                    options.skipCorrupt(), options.checksum());
            this.records = events.records().iterator();
        } catch (IOException error) {
            allocator.close();
            throw new UncheckedIOException(error.getMessage(), error);
        }
    }

    @Override
    public boolean next() throws IOException {
        release();
        while (records.hasNext()) {
            VisibleRecord record = records.next();
            RecordFacts facts = new RecordFacts(record.batchId(), record.commitMicros(), partition.host(), lane,
                    record.recordId());
            if (!filters.isEmpty() && !RecordFilter.mayMatchAll(filters, constants(facts), record.stats(),
                    record.unitsPerSecond())) {
                continue;
            }
            VectorSchemaRoot root = ArrowBodies.load(record.body(), allocator);
            try {
                current = columns.batch(root, facts, record.deleted(), allocator);
            } catch (RuntimeException failed) {
                root.close();
                throw failed;
            }
            if (current != null) {
                return true;
            }
        }
        return false;
    }

    private static Map<String, Object> constants(RecordFacts facts) {
        Map<String, Object> values = new HashMap<>();
        values.put("_batch_id", facts.batchId());
        values.put("_commit_time", facts.commitMicros());
        values.put("_host", facts.host());
        values.put("_lane", facts.lane());
        values.put("_record_id", facts.recordId());
        return values;
    }

    @Override
    public ColumnarBatch get() {
        return current.batch();
    }

    private void release() {
        if (current != null) {
            current.close();
            current = null;
        }
    }

    @Override
    public void close() throws IOException {
        release();
        try {
            events.close();
        } finally {
            allocator.close();
        }
    }
}
