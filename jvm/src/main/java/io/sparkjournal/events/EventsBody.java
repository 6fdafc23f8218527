package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.Shown;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import io.sparkjournal.journal.StrictJson;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * An EVENTS record's body (EVENTS.md): one Arrow IPC stream of a schema
 * message and one record batch message, the schema's metadata tagging the
 * batch it belongs to (query id, batch id) and the min/max of its cheap
 * columns.
 *
 * <p>{@link #split} reads the two messages where they lie: the schema is
 * decoded, the batch message only located. A reader loads the batch over the
 * same memory with Arrow Java's {@code
 * MessageSerializer.deserializeRecordBatch(batch().message(), ArrowBuf over
 * batch().body())} (which releases that ArrowBuf once: hand it a reference of
 * its own); offsets are from the body's first byte. Bytes after the batch
 * message (the stream's end marker) are not looked at.
 *
 * <p>Damage: a body that is not such a stream is an {@link EventsBodyException}
 * ({@link IpcMessage}); so is a tag whose query is not UTF-8 or whose batch id
 * is not an integer of 0 .. 2^63 - 1 in decimal without sign or leading zeros,
 * each only when it is asked for; unreadable stats are no stats. A second
 * message that is not a RecordBatch, or a compressed RecordBatch, is damaged
 * at {@link #split} (EVENTS.md, "EVENTS records", reader requirements).
 */
public final class EventsBody {

    public static final String META_QUERY = Constants.SchemaMetadata.META_QUERY;
    public static final String META_BATCH = Constants.SchemaMetadata.META_BATCH;
    public static final String META_STATS = Constants.SchemaMetadata.META_STATS;

    private static final Pattern BATCH_ID = Pattern.compile("0|[1-9][0-9]*");

    private final IpcMessage schemaMessage;
    private final IpcMessage batch;
    private final Schema schema;
    private final Map<String, byte[]> metadata;

    private EventsBody(IpcMessage schemaMessage, IpcMessage batch, Schema schema,
                       Map<String, byte[]> metadata) {
        this.schemaMessage = schemaMessage;
        this.batch = batch;
        this.schema = schema;
        this.metadata = metadata;
    }

    /** The body's two messages; {@code body} from its position to its limit, never copied. */
    public static EventsBody split(ByteBuffer body) throws EventsBodyException {
        ByteBuffer all = body.slice();
        if (all.remaining() < 8) {
            throw new EventsBodyException("an events body of " + all.remaining()
                    + " bytes is not an Arrow IPC stream");
        }
        IpcMessage first = IpcMessage.read(all, 0);
        Schema schema;
        Map<String, byte[]> metadata = new LinkedHashMap<>();
        try {
            if (first.headerType() != MessageHeader.Schema) {
                throw new EventsBodyException("Expected schema message, got " + first.typeName());
            }
            org.apache.arrow.flatbuf.Schema flat = (org.apache.arrow.flatbuf.Schema)
                    first.message().header(new org.apache.arrow.flatbuf.Schema());
            for (int i = 0; i < flat.customMetadataLength(); i++) {
                KeyValue entry = flat.customMetadata(i);
                metadata.put(entry.key(), bytes(entry.valueAsByteBuffer()));
            }
            schema = MessageSerializer.deserializeSchema(first.message());
        } catch (RuntimeException broken) {
            throw new EventsBodyException("Invalid flatbuffers message: " + broken, broken);
        }
        IpcMessage second = IpcMessage.read(all, first.bodyOffset());
        // EVENTS.md, "EVENTS records": a second message that is not a RecordBatch, or a
        // compressed one (no writer compresses), is damaged
        if (second.headerType() != MessageHeader.RecordBatch) {
            throw new EventsBodyException("an events body's second message is a " + second.typeName()
                    + ", not a record batch");
        }
        try {
            org.apache.arrow.flatbuf.RecordBatch header = (org.apache.arrow.flatbuf.RecordBatch)
                    second.message().header(new org.apache.arrow.flatbuf.RecordBatch());
            if (header.compression() != null) {
                throw new EventsBodyException("an events body's record batch is compressed: no writer "
                        + "of this format compresses (EVENTS.md), the body is damaged");
            }
        } catch (RuntimeException broken) {
            throw new EventsBodyException("Invalid flatbuffers message: " + broken, broken);
        }
        return new EventsBody(first, second, schema, Collections.unmodifiableMap(metadata));
    }

    private static byte[] bytes(ByteBuffer value) {
        if (value == null) {
            return new byte[0];
        }
        byte[] out = new byte[value.remaining()];
        value.duplicate().get(out);
        return out;
    }

    /** The number of rows the body's record batch holds (deleted ones included). */
    public long rows() throws EventsBodyException {
        try {
            org.apache.arrow.flatbuf.RecordBatch header = (org.apache.arrow.flatbuf.RecordBatch)
                    batch.message().header(new org.apache.arrow.flatbuf.RecordBatch());
            return header.length();
        } catch (RuntimeException broken) {
            throw new EventsBodyException("Invalid flatbuffers message: " + broken, broken);
        }
    }

    /** The stored schema, with the record's metadata (Arrow Java's decoding of it). */
    public Schema schema() {
        return schema;
    }

    /** The schema's metadata as stored: key to raw value bytes. */
    public Map<String, byte[]> metadata() {
        return metadata;
    }

    /** The schema message (offsets from the body's start). */
    public IpcMessage schemaMessage() {
        return schemaMessage;
    }

    /** The record batch message, not decoded (offsets from the body's start). */
    public IpcMessage batch() {
        return batch;
    }

    /** The query id the body is tagged with, or null for an untagged body (absent or empty). */
    public String query() throws EventsBodyException {
        byte[] raw = metadata.get(META_QUERY);
        if (raw == null || raw.length == 0) {
            return null;
        }
        try {
            CharBuffer text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(raw));
            return text.toString();
        } catch (CharacterCodingException notUtf8) {
            throw new EventsBodyException("the query id an events body is tagged with is not "
                    + "UTF-8: " + Shown.bytes(raw), notUtf8);
        }
    }

    /**
     * The batch id the body is tagged with, or null for an untagged body (no
     * batch id, or no query: EVENTS.md, "EVENTS records"; a batch value that
     * is not one is damaged even then).
     */
    public Long batchId() throws EventsBodyException {
        byte[] raw = metadata.get(META_BATCH);
        if (raw == null) {
            return null;
        }
        String text = new String(raw, StandardCharsets.ISO_8859_1);
        if (!BATCH_ID.matcher(text).matches() || new BigInteger(text).bitLength() > 63) {
            throw new EventsBodyException("the batch id an events body is tagged with, "
                    + Shown.bytes(raw) + ", is not an integer of 0 .. 2^63 - 1 in decimal without"
                    + " sign, spaces or leading zeros");
        }
        return query() == null ? null : Long.parseLong(text);
    }

    /**
     * The per-record min/max: the JSON of the stats entry,
     * {column: [min, max]} as written; an empty object if there is none (absent
     * or empty) or none that can be read (EVENTS.md, "Statistics": JSON.md
     * refuses it, or it is not an object; statistics are never an error).
     * Times are integers in their column's unit, dates in days.
     */
    public JsonNode stats() throws EventsBodyException {
        byte[] raw = metadata.get(META_STATS);
        if (raw == null || raw.length == 0) {
            return JsonNodeFactory.instance.objectNode();
        }
        try {
            JsonNode stats = StrictJson.parse(raw);
            return stats.isObject() ? stats : JsonNodeFactory.instance.objectNode();
        } catch (StrictJson.Refused unreadable) {
            return JsonNodeFactory.instance.objectNode();
        }
    }
}
