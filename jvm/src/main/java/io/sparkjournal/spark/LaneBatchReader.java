package io.sparkjournal.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

import io.sparkjournal.events.LaneEvents;
import io.sparkjournal.events.PageRef;
import io.sparkjournal.events.VisibleRecord;

/**
 * Reads one lane on the executor as columnar batches (EVENTS.md,
 * "Visibility: what a read returns", in today's readers' order): first the live page files of the
 * lane's snapshot, oldest first ({@link PageBatches}: Spark's Parquet reader,
 * the lane's deletions applied; pages whose PAGE record ranges rule out a
 * pushed filter are skipped unopened, {@link PagePruning}), then one batch per
 * visible stored record of the journal's live tail. Only records whose ids
 * lie in the partition's range are read (a stream's micro-batch; pages that
 * straddle its ends are cut to it row by row).
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
    private final StructType output;
    private final List<String> eventsColumns;
    private final BufferAllocator allocator = new RootAllocator();
    private final LaneEvents events;
    private final Iterator<VisibleRecord> records;
    private final Iterator<PageRef> pages;
    private final String lane;
    private RecordColumns.Loaded current;
    private PageBatches page;               // the page being read, while pages are read
    private long pageBytesChecked;          // PageBytesCheckedMetric

    /** {@code eventsColumns}: the names of the journal's events columns, in order (PageBatches checks
     *  each page's footer against them). */
    LaneBatchReader(LanePartition partition, ReadOptions options, StructType output, List<String> eventsColumns,
                    List<RecordFilter> filters, String logBase) {
        this.partition = partition;
        this.filters = filters;
        this.columns = new RecordColumns(output);
        this.output = output;
        this.eventsColumns = eventsColumns;
        this.lane = Path.of(partition.lane()).getFileName().toString();
        try {
            this.events = LaneEvents.open(Path.of(partition.lane()), partition.node(), Path.of(logBase),
                    options.skipCorrupt(), options.checksum());
        } catch (IOException error) {
            allocator.close();
            throw new UncheckedIOException(error.getMessage(), error);
        }
        try {
            this.pages = events.pages().iterator();
            this.records = events.records().iterator();
        } catch (IOException | RuntimeException error) {
            closeQuietly();
            throw error instanceof IOException io ? new UncheckedIOException(io.getMessage(), io)
                    : (RuntimeException) error;
        }
    }

    @Override
    public boolean next() throws IOException {
        release();
        if (nextPageBatch()) {
            return true;
        }
        while (records.hasNext()) {
            VisibleRecord record = records.next();
            if (!partition.inRange(record.recordId())) {
                continue;
            }
            RecordFacts facts = new RecordFacts(record.batchId(), record.commitMicros(), partition.host(), lane,
                    record.recordId());
            if (!filters.isEmpty() && !RecordFilter.mayMatchAll(filters, facts, record.stats(),
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

    /** Moves to the next page batch with a visible row; false once every page is read. */
    private boolean nextPageBatch() throws IOException {
        while (true) {
            if (page != null) {
                if (page.next()) {
                    return true;
                }
                page.close();
                page = null;
            }
            if (!pages.hasNext()) {
                return false;
            }
            PageRef ref = pages.next();
            if (Long.compareUnsigned(ref.lastId(), partition.firstId()) >= 0
                    && Long.compareUnsigned(ref.firstId(), partition.endId()) < 0
                    && PagePruning.wanted(filters, ref, partition.host(), lane)) {
                page = PageBatches.open(events.lane(), ref, output, eventsColumns, events.deletions(), partition.host(),
                        lane, partition.firstId(), partition.endId());
                pageBytesChecked += page.checkedBytes();
            }
        }
    }

    @Override
    public CustomTaskMetric[] currentMetricsValues() {
        return new CustomTaskMetric[] {SharedStringsMetric.of(columns.sharedStringValues()),
                PageBytesCheckedMetric.of(pageBytesChecked)};
    }

    @Override
    public ColumnarBatch get() {
        return page != null ? page.batch() : current.batch();
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
            if (page != null) {
                page.close();
                page = null;
            }
        } finally {
            try {
                events.close();
            } finally {
                allocator.close();
            }
        }
    }

    private void closeQuietly() {
        try {
            events.close();
        } catch (IOException ignored) {
            // the first failure is the one reported
        } finally {
            allocator.close();
        }
    }
}
