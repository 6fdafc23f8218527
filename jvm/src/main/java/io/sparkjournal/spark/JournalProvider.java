package io.sparkjournal.spark;

import java.util.Map;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The {@code sparkjournal} data source on the JVM.
 *
 * Spark's {@code DataSource.lookupDataSource} asks {@code ServiceLoader} for a
 * {@link DataSourceRegister} of the short name before it looks at the Python
 * data sources, so with this jar on the classpath the name means this
 * provider. It reads batches and micro-batch streams itself (columnar, pruned,
 * placed: {@link JournalScan}, {@link JournalStream}) and writes them
 * ({@link JournalWriteBuilder}: JVM tasks, the decision in Java); a write
 * given {@code writer=python} goes to the Python data source of the same name
 * ({@code sparkjournal/spark/datasource.py}, registered by the
 * {@code pyspark_sparkjournal} module).
 *
 * The schema is the journal's events schema ({@code schema.arrow} in its
 * commit log) followed by the metadata columns; a user-specified schema picks
 * any of those columns in any order, checked when the read is planned. A
 * write passes its own schema, which the write checks against the journal's.
 */
public final class JournalProvider implements TableProvider, DataSourceRegister {

    public static final String NAME = "sparkjournal";

    @Override
    public String shortName() {
        return NAME;
    }

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        ConnectorBuild.requireSparkMajor();
        return JournalSchema.of(ReadOptions.parse(options)).full();
    }

    @Override
    public boolean supportsExternalMetadata() {
        return true;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        ConnectorBuild.requireSparkMajor();
        return new JournalTable(schema, partitioning, properties);
    }
}
