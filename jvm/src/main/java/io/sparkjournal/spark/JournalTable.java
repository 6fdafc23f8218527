package io.sparkjournal.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A journal root as Spark's table: {@code schema} is what Spark gave
 * {@code getTable} (the inferred full schema, a user's read schema, or a
 * write's input schema). Batch reads and micro-batch streams are planned
 * here; writes go to the Python data source's table for the same options
 * (the write path is the C core's), made only when one is asked for.
 */
final class JournalTable implements SupportsRead, SupportsWrite {

    private final StructType schema;
    private final Transform[] partitioning;
    private final Map<String, String> properties;
    private Table python;

    JournalTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        this.schema = schema;
        this.partitioning = partitioning;
        this.properties = properties;
    }

    @Override
    public String name() {
        return "sparkjournal:" + properties.getOrDefault("path", "");
    }

    @Override
    public StructType schema() {
        return schema;
    }

    @Override
    public Set<TableCapability> capabilities() {
        Set<TableCapability> all = EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ);
        all.addAll(python().capabilities());      // the writer's, with its own refusals
        return all;
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        ReadOptions read = ReadOptions.parse(options);
        JournalSchema journal = JournalSchema.of(read);
        return new JournalScanBuilder(read, journal, journal.checkAsked(schema));
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        return ((SupportsWrite) python()).newWriteBuilder(info);
    }

    /** The Python data source's table for these options, made on first need. */
    private Table python() {
        if (python == null) {
            PythonDataSourceV2 provider = new PythonDataSourceV2();
            provider.setShortName(JournalProvider.NAME);
            python = provider.getTable(schema, partitioning, properties);
        }
        return python;
    }
}
