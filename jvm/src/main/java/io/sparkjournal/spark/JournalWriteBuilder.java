package io.sparkjournal.spark;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;

/**
 * The connector's own write of {@code df.write.format("sparkjournal")} and
 * {@code writeStream.format("sparkjournal")}. Appends only: it is a
 * {@link SupportsTruncate} (with the table's TRUNCATE capability) only so that
 * {@code mode("overwrite")} and a stream's complete mode reach
 * {@link #truncate}, which refuses them in the same words as the Python data
 * source, instead of Spark's generic refusal. The options are parsed here,
 * before anything else ({@link WriteOptions}).
 */
final class JournalWriteBuilder implements SupportsTruncate {

    static final String APPEND_ONLY = "sparkjournal is append-only: use mode('append')";
    private final LogicalWriteInfo info;
    private final WriteOptions options;

    /**
     * The options parsed ({@link OptionException} for a wrong one) and every
     * reason the JVM writer cannot write this checked, before anything runs:
     * {@link JvmWriteRefusal} names it. A column taking a reserved name
     * (metadata columns, {@code __sj_row}) is refused first, whichever writer
     * would write: a {@link SchemaEvolution.SchemaMismatchException}.
     */
    JournalWriteBuilder(LogicalWriteInfo info) {
        this.info = info;
        this.options = WriteOptions.parse(info.options().asCaseSensitiveMap());
        SchemaEvolution.refuseReserved(java.util.Arrays.asList(info.schema().fieldNames()),
                "a write into " + options.path());
        SparkSession session = SparkSession.active();
        try {
            ConnectorBuild.requireOnExecutors(session.sparkContext(), "a format(\"sparkjournal\") write");
        } catch (IllegalStateException missing) {
            throw new JvmWriteRefusal(missing.getMessage(), missing);
        }
        String logUri = options.commitLog();
        if (logUri != null && logUri.contains("://") && !logUri.startsWith("file:")) {
            throw new JvmWriteRefusal("its commit log " + logUri + " is not on a local path or a "
                    + "file:// URI, the only ones the JVM writes decisions into", null);
        }
        try {
            SparkArrowSchema.toArrow(info.schema(), session.sessionState().conf().sessionLocalTimeZone());
        } catch (IllegalArgumentException unconvertible) {
            throw new JvmWriteRefusal(unconvertible.getMessage(), unconvertible);
        }
    }

    @Override
    public WriteBuilder truncate() {
        throw new OptionException(APPEND_ONLY);
    }

    @Override
    public Write build() {
        return new JournalWrite(info, options);
    }
}
