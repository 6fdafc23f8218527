package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * {@link EventsDump}'s JSON of Arrow things: a schema as plain field
 * descriptions, and an events body with its batch loaded by Arrow Java from
 * the message's position (copied into an allocator's buffer: the dump proves
 * the positions, it is not the zero-copy reader). Test support only.
 */
final class DumpArrow {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private DumpArrow() {
    }

    /** {"fields": [...], "metadata": {hex key: hex value}}: {@code raw}, else Arrow Java's. */
    static ObjectNode schema(Schema schema, Map<String, byte[]> raw) {
        ObjectNode node = JSON.objectNode();
        ArrayNode fields = node.putArray("fields");
        for (Field field : schema.getFields()) {
            fields.add(field(field));
        }
        Map<String, byte[]> metadata = raw;
        if (metadata == null) {
            metadata = new LinkedHashMap<>();
            for (Map.Entry<String, String> entry : schema.getCustomMetadata().entrySet()) {
                metadata.put(entry.getKey(), entry.getValue().getBytes(StandardCharsets.UTF_8));
            }
        }
        node.set("metadata", EventsDump.metadataHex(metadata));
        return node;
    }

    private static ObjectNode field(Field field) {
        ObjectNode node = JSON.objectNode();
        node.put("name", field.getName());
        node.put("nullable", field.isNullable());
        node.put("type", type(field.getType()));
        ArrayNode children = node.putArray("children");
        for (Field child : field.getChildren()) {
            children.add(field(child));
        }
        return node;
    }

    /** A type's name as the agreement test spells it for pyarrow's types too. */
    static String type(ArrowType type) {
        if (type instanceof ArrowType.Int t) {
            return (t.getIsSigned() ? "int" : "uint") + t.getBitWidth();
        }
        if (type instanceof ArrowType.FloatingPoint t) {
            return switch (t.getPrecision()) {
                case HALF -> "float16";
                case SINGLE -> "float32";
                case DOUBLE -> "float64";
            };
        }
        if (type instanceof ArrowType.Timestamp t) {
            return "timestamp[" + unit(t.getUnit().name()) + ", " + t.getTimezone() + "]";
        }
        if (type instanceof ArrowType.Date t) {
            return t.getUnit() == org.apache.arrow.vector.types.DateUnit.DAY ? "date32" : "date64";
        }
        if (type instanceof ArrowType.Decimal t) {
            return "decimal(" + t.getPrecision() + "," + t.getScale() + ")";
        }
        return switch (type.getTypeID()) {
            case Utf8 -> "utf8";
            case LargeUtf8 -> "large_utf8";
            case Binary -> "binary";
            case LargeBinary -> "large_binary";
            case Bool -> "bool";
            case List -> "list";
            case LargeList -> "large_list";
            case Struct -> "struct";
            case Map -> "map";
            case Null -> "null";
            default -> type.toString();
        };
    }

    private static String unit(String name) {
        return switch (name) {
            case "SECOND" -> "s";
            case "MILLISECOND" -> "ms";
            case "MICROSECOND" -> "us";
            default -> "ns";
        };
    }

    /** The body's tag, stats, schema, message positions, and its batch as Arrow Java loads it. */
    static JsonNode body(EventsBody body) throws Exception {
        ObjectNode node = JSON.objectNode();
        node.put("query", body.query());
        Long batchId = body.batchId();
        node.set("batch", batchId == null ? JSON.nullNode() : JSON.numberNode(batchId));
        node.set("stats", body.stats());
        node.set("schema", schema(body.schema(), body.metadata()));
        IpcMessage message = body.batch();
        node.put("type", message.typeName());
        node.put("metadata_offset", message.metadataOffset());
        node.put("metadata_length", message.metadataLength());
        node.put("body_offset", message.bodyOffset());
        node.put("body_length", message.bodyLength());
        if (message.headerType() == MessageHeader.RecordBatch) {
            node.set("columns", load(body));
        }
        return node;
    }

    /**
     * {"rows": n, "original_positions": [...], "values": {column: [...]}}, the
     * values for the columns of simple types.
     */
    private static JsonNode load(EventsBody body) throws Exception {
        ObjectNode node = JSON.objectNode();
        try (BufferAllocator allocator = new RootAllocator()) {
            ArrowBuf copy = allocator.buffer(Math.max(1, body.batch().bodyLength()));
            copy.setBytes(0, body.batch().body());
            // deserializeRecordBatch takes over the reference to `copy` (it releases it once)
            try (ArrowRecordBatch batch = MessageSerializer.deserializeRecordBatch(
                    body.batch().message(), copy);
                 VectorSchemaRoot root = VectorSchemaRoot.create(body.schema(), allocator)) {
                new VectorLoader(root).load(batch);
                node.put("rows", root.getRowCount());
                FieldVector rows = root.getVector(Deletions.ROW_COLUMN);
                ArrayNode positions = node.putArray("original_positions");
                for (int i = 0; i < root.getRowCount(); i++) {
                    positions.add(Deletions.originalPosition((BaseIntVector) rows, i));
                }
                ObjectNode values = node.putObject("values");
                List<FieldVector> vectors = root.getFieldVectors();
                for (FieldVector vector : vectors) {
                    if (simple(vector)) {
                        ArrayNode column = values.putArray(vector.getName());
                        for (int i = 0; i < root.getRowCount(); i++) {
                            value(vector, i, column);
                        }
                    }
                }
            }
        }
        return node;
    }

    private static boolean simple(FieldVector vector) {
        return vector instanceof BigIntVector || vector instanceof IntVector
                || vector instanceof SmallIntVector || vector instanceof TinyIntVector
                || vector instanceof Float8Vector || vector instanceof Float4Vector
                || vector instanceof VarCharVector || vector instanceof BitVector;
    }

    private static void value(FieldVector vector, int i, ArrayNode column) {
        if (vector.isNull(i)) {
            column.addNull();
        } else if (vector instanceof VarCharVector text) {
            column.add(new String(text.get(i), StandardCharsets.UTF_8));
        } else if (vector instanceof BitVector bits) {
            column.add(bits.get(i) != 0);
        } else if (vector instanceof Float8Vector f) {
            column.add(f.get(i));
        } else if (vector instanceof Float4Vector f) {
            column.add((double) f.get(i));
        } else {
            column.add(((BaseIntVector) vector).getValueAsLong(i));
        }
    }
}
