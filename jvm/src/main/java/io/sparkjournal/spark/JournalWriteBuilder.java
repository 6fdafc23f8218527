package io.sparkjournal.spark;

import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;

/**
 * The connector's own write of {@code df.write.format("sparkjournal")} and
 * {@code writeStream.format("sparkjournal")}. Appends only: it is a
 * {@link SupportsTruncate} (with the table's TRUNCATE capability) only so that
 * {@code mode("overwrite")} and a stream's complete mode reach
 * {@link #truncate}, which refuses them in the words of the Python data
 * source, instead of Spark's generic refusal. The options are parsed here,
 * before anything else ({@link WriteOptions}).
 */
final class JournalWriteBuilder implements SupportsTruncate {

    static final String APPEND_ONLY = "sparkjournal is append-only: use mode('append')";
    private final LogicalWriteInfo info;
    private final WriteOptions options;

    JournalWriteBuilder(LogicalWriteInfo info) {
        this.info = info;
        this.options = WriteOptions.parse(info.options().asCaseSensitiveMap());
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
