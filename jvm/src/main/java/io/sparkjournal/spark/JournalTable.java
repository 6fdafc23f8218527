package io.sparkjournal.spark;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;
import java.util.logging.Logger;

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
 * here, and so are writes (JVM tasks, the decision in Java:
 * {@link JournalWriteBuilder}) unless the write asks for the Python data
 * source's writer ({@code writer=python}), whose table is made only then.
 */
final class JournalTable implements SupportsRead, SupportsWrite {

    private static final Logger LOG = Logger.getLogger("sparkjournal.write");

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

    /**
     * Reads of both kinds; appends of both kinds; TRUNCATE only so that an
     * overwrite reaches {@link JournalWriteBuilder#truncate}, which refuses it
     * saying to append; ACCEPT_ANY_SCHEMA since a write's schema is checked
     * against the journal's by the write itself ({@link SchemaEvolution}, or
     * the same rules in the Python data source's writer), not against this
     * table's schema.
     */
    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ,
                TableCapability.BATCH_WRITE, TableCapability.STREAMING_WRITE,
                TableCapability.TRUNCATE, TableCapability.ACCEPT_ANY_SCHEMA);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        ReadOptions read = ReadOptions.parse(options);
        JournalSchema journal = JournalSchema.of(read);
        return new JournalScanBuilder(read, journal, journal.checkAsked(schema));
    }

    /**
     * The connector's own write (option writer auto or jvm: JVM tasks, the
     * decision in Java, no Python worker; {@link JournalWriteBuilder}), or the
     * Python data source's writer for {@code .option("writer", "python")}, and
     * for auto where the JVM writer cannot write this ({@link JvmWriteRefusal}:
     * logged at INFO, saying why).
     */
    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
        String writer = WriteOptions.writer(info.options().asCaseSensitiveMap());
        if (writer.equals("PYTHON")) {
            return ((SupportsWrite) python()).newWriteBuilder(info);
        }
        try {
            return new JournalWriteBuilder(info);
        } catch (JvmWriteRefusal refused) {
            if (writer.equals("JVM")) {
                throw new JvmWriteRefusal("the JVM writer (writer=jvm) cannot write into "
                        + properties.getOrDefault("path", "") + ": " + refused.getMessage()
                        + "; leave writer unset (auto) or set it to python for the Python data "
                        + "source's writer", refused);
            }
            LOG.info("the write into " + properties.getOrDefault("path", "") + " goes to the Python "
                    + "data source's writer (writer=auto: " + refused.getMessage() + ")");
            return ((SupportsWrite) python()).newWriteBuilder(info);
        }
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
