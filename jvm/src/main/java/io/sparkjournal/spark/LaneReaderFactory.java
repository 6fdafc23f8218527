package io.sparkjournal.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Makes each lane's columnar reader on the executor; plain values only. */
final class LaneReaderFactory implements PartitionReaderFactory {

    private static final long serialVersionUID = 1L;

    private final ReadOptions options;
    private final StructType columns;
    private final List<RecordFilter> filters;
    private final String logBase;
    private final ArrayList<String> eventsColumns;       // the journal's, in order: page footers are checked

    LaneReaderFactory(ReadOptions options, JournalSchema journal, StructType columns, List<RecordFilter> filters) {
        this.options = options;
        this.columns = columns;
        this.filters = filters;
        this.logBase = journal.logBase();
        this.eventsColumns = new ArrayList<>(List.of(journal.events().fieldNames()));
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return true;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        throw new UnsupportedOperationException("sparkjournal's JVM reader is columnar only");
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
        return new LaneBatchReader((LanePartition) partition, options, columns, eventsColumns, filters, logBase);
    }
}
