package io.sparkjournal.spark;

import io.sparkjournal.format.Constants;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * The columns of a journal as Spark sees them: its events schema (the commit
 * log's {@code schema.arrow}, timestamps as Spark's instants) followed by the
 * metadata columns (EVENTS.md, "Reading: the columns"; declared in
 * constants.json), carried in the jar as {@value #METADATA_RESOURCE}.
 * Planned on the driver; partitions carry what they need as plain values.
 */
final class JournalSchema implements Serializable {

    private static final long serialVersionUID = 1L;
    static final String METADATA_RESOURCE = "/io/sparkjournal/spark/metadata.arrow";
    static final String SCHEMA_FILE = Constants.Paths.SCHEMA_FILE;
    private static final Schema METADATA = readMetadata();

    private final String logBase;
    private final StructType events;
    private final StructType full;

    private JournalSchema(String logBase, StructType events) {
        this.logBase = logBase;
        this.events = events;
        List<StructField> fields = new ArrayList<>(List.of(events.fields()));
        fields.addAll(List.of(metadata().fields()));
        this.full = new StructType(fields.toArray(new StructField[0]));
    }

    /** The journal the options name; an error saying what to do if it has no events schema yet. */
    static JournalSchema of(ReadOptions options) {
        String base = JournalPaths.logBase(options);
        Path file = Path.of(base, SCHEMA_FILE);
        byte[] raw;
        try {
            raw = Files.readAllBytes(file);
        } catch (NoSuchFileException missing) {
            throw new OptionException("the journal at " + options.path() + " has no events schema yet (no "
                    + "schema.arrow in its commit log " + base + "): write to it first, or pass commitLog if "
                    + "it lives elsewhere");
        } catch (IOException error) {
            throw new UncheckedIOException("cannot read " + file + ": " + error.getMessage(), error);
        }
        return new JournalSchema(base, sparkColumns(schemaOf(raw, file.toString())));
    }

    /** The metadata columns, as Spark types, in their defined order. */
    static StructType metadata() {
        return sparkColumns(METADATA);
    }

    static Schema metadataArrow() {
        return METADATA;
    }

    String logBase() {
        return logBase;
    }

    StructType events() {
        return events;
    }

    StructType full() {
        return full;
    }

    /**
     * The columns a read yields for a user-specified {@code asked} schema (null
     * or the journal's own: all of them); fails, naming the column and the
     * journal's schema, for a name the journal lacks, another type, or NOT NULL
     * asked of a nullable column (the same checks and words as the Python
     * data source's reader).
     */
    StructType checkAsked(StructType asked) {
        if (asked == null || asked.equals(full)) {
            return full;
        }
        String has = full.simpleString();
        for (StructField field : asked.fields()) {
            StructField known = find(field.name());
            if (known == null) {
                StructField near = null;
                for (StructField candidate : full.fields()) {
                    if (candidate.name().equalsIgnoreCase(field.name())) {
                        near = candidate;
                        break;
                    }
                }
                String hint = near == null ? "" : " (did you mean " + near.name() + "? names are case-sensitive)";
                throw new OptionException("column " + field.name() + " is not in this journal" + hint
                        + ": the journal has " + has);
            }
            if (!known.dataType().equals(field.dataType())) {
                throw new OptionException("column " + field.name() + " is " + known.dataType().simpleString()
                        + " in this journal, not " + field.dataType().simpleString() + ": the journal has " + has);
            }
            if (!field.nullable() && known.nullable()) {
                throw new OptionException("column " + field.name() + " is nullable in this journal: ask for it "
                        + "without NOT NULL (the journal has " + has + ")");
            }
        }
        return asked;
    }

    private StructField find(String name) {
        for (StructField field : full.fields()) {
            if (field.name().equals(name)) {
                return field;
            }
        }
        return null;
    }

    static StructType sparkColumns(Schema arrow) {
        return ArrowUtils.fromArrowSchema(arrow);
    }

    /** An Arrow schema serialized as one IPC message (COMMIT_LOG.md: {@code schema.arrow}). */
    static Schema schemaOf(byte[] raw, String where) {
        try {
            return MessageSerializer.deserializeSchema(
                    new ReadChannel(Channels.newChannel(new ByteArrayInputStream(raw))));
        } catch (IOException | RuntimeException bad) {
            throw new IllegalStateException(where + " is not an Arrow schema (" + bad.getMessage()
                    + "); restore it or remove it to adopt the next writer's schema", bad);
        }
    }

    private static Schema readMetadata() {
        try (InputStream in = JournalSchema.class.getResourceAsStream(METADATA_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the sparkjournal jar has no " + METADATA_RESOURCE
                        + ": it was not built by sparkjournal/spark/jvm_build.py");
            }
            return schemaOf(in.readAllBytes(), METADATA_RESOURCE);
        } catch (IOException error) {
            throw new UncheckedIOException(error);
        }
    }
}
