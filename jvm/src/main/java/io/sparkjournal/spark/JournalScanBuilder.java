package io.sparkjournal.spark;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * Pruning and pushdown, which only the JVM API offers a source: Spark names
 * the columns a query needs (only their Arrow buffers are loaded), and hands
 * over its filters; those the record pruning understands ({@link RecordFilter}:
 * comparisons on the metadata columns and on event columns whose min/max a
 * record carries) skip whole records before their rows are touched. Every
 * filter is still returned to Spark, which applies them to the rows read:
 * pruning only ever skips records holding no matching row, so a result is the
 * same with and without it.
 */
final class JournalScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownFilters {

    private final ReadOptions options;
    private final JournalSchema journal;
    private StructType columns;
    private Filter[] pushed = new Filter[0];
    private List<RecordFilter> pruning = new ArrayList<>();

    JournalScanBuilder(ReadOptions options, JournalSchema journal, StructType columns) {
        this.options = options;
        this.journal = journal;
        this.columns = columns;
    }

    @Override
    public void pruneColumns(StructType required) {
        columns = required;
    }

    @Override
    public Filter[] pushFilters(Filter[] filters) {
        List<Filter> used = new ArrayList<>();
        List<RecordFilter> understood = new ArrayList<>();
        for (Filter filter : filters) {
            RecordFilter recordFilter = RecordFilter.from(filter, journal.full());
            if (recordFilter != null) {
                used.add(filter);
                understood.add(recordFilter);
            }
        }
        pushed = used.toArray(new Filter[0]);
        pruning = understood;
        return filters;
    }

    @Override
    public Filter[] pushedFilters() {
        return pushed;
    }

    @Override
    public Scan build() {
        List<RecordFilter> all = new ArrayList<>(pruning);
        all.addAll(RecordFilter.startingPoint(options));
        return new JournalScan(options, journal, columns, all);
    }
}
