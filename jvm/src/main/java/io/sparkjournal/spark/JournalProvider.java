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
 * provider. It reads batches itself (columnar, pruned, placed: {@link JournalScan})
 * and hands everything else to the Python data source of the same name
 * ({@code sparkjournal/spark/datasource.py}, registered by the
 * {@code pyspark_sparkjournal} module): writes, whose two-phase commit lives
 * in Python and the C core, and micro-batch streams.
 *
 * The schema is the journal's events schema ({@code schema.arrow} in its
 * commit log) followed by the metadata columns; a user-specified schema picks
 * any of those columns in any order, checked when the read is planned. A
 * write passes its own schema, which the Python writer checks against the
 * journal's.
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
