package io.sparkjournal.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.CharType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DayTimeIntervalType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.GeographyType;
import org.apache.spark.sql.types.GeometryType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.NullType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimeType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.types.UserDefinedType;
import org.apache.spark.sql.types.VarcharType;
import org.apache.spark.sql.types.VariantType;

/**
 * The Arrow schema a lane stores for a Spark schema, the same whichever
 * writer, JVM or Python, makes it (the mapping of pyspark's
 * {@code to_arrow_schema}, without large types), so a lane holds one schema
 * whichever side writes it: timestamps in microseconds with the session zone,
 * timestamp_ntz without one, dates as date32, decimals as
 * decimal128, strings utf8, binary, day-time intervals duration[us], times
 * time64[ns], arrays list&lt;element&gt;, maps map&lt;entries: key not null,
 * value&gt;, structs, nulls, UDTs as their SQL type, variants and geo types as
 * pyspark's tagged structs. A field with Spark metadata carries it under
 * {@code SPARK::metadata::json}, spelled as {@link PythonJson} says. Char and
 * varchar columns are refused, as pyspark's conversion refuses them.
 *
 * <p>{@link #fill} writes Spark rows into a root of such a schema with Spark's
 * own {@code ArrowWriter}, the same writer Spark's Arrow paths use.
 */
public final class SparkArrowSchema {

    /** pyspark's key for a field's Spark metadata. */
    public static final String METADATA_KEY = "SPARK::metadata::json";

    private static final ObjectMapper JSON = new ObjectMapper();

    private SparkArrowSchema() {
    }

    /** The Arrow schema of {@code schema}; {@code timezone} names the zone of TimestampType. */
    public static Schema toArrow(StructType schema, String timezone) {
        List<Field> fields = new ArrayList<>();
        for (StructField field : schema.fields()) {
            fields.add(field(field.name(), field.dataType(), field.nullable(), field.metadata(),
                    timezone));
        }
        return new Schema(fields);
    }

    /**
     * Appends {@code rows} to {@code root} (a root of {@link #toArrow}'s schema,
     * empty or already holding rows written by this method) and sets its row
     * count; returns the number of rows written.
     */
    public static int fill(VectorSchemaRoot root, Iterator<InternalRow> rows) {
        ArrowWriter writer = ArrowWriter.create(root);
        int count = 0;
        while (rows.hasNext()) {
            writer.write(rows.next());
            count++;
        }
        writer.finish();
        return count;
    }

    private static Field field(String name, DataType type, boolean nullable, Metadata metadata,
                               String timezone) {
        Map<String, String> arrowMetadata = metadata == null || metadata.map().isEmpty() ? null
                : Map.of(METADATA_KEY, PythonJson.dumps(parse(metadata.json())));
        return child(name, type, nullable, arrowMetadata, timezone);
    }

    private static Field child(String name, DataType type, boolean nullable,
                               Map<String, String> metadata, String timezone) {
        if (type instanceof UserDefinedType<?> udt) {
            return child(name, udt.sqlType(), nullable, metadata, timezone);
        }
        if (type instanceof ArrayType array) {
            return new Field(name, new FieldType(nullable, new ArrowType.List(), null, metadata),
                    List.of(child("element", array.elementType(), array.containsNull(), null,
                            timezone)));
        }
        if (type instanceof MapType map) {
            Field entries = new Field("entries", FieldType.notNullable(ArrowType.Struct.INSTANCE),
                    List.of(child("key", map.keyType(), false, null, timezone),
                            child("value", map.valueType(), map.valueContainsNull(), null,
                                    timezone)));
            return new Field(name, new FieldType(nullable, new ArrowType.Map(false), null,
                    metadata), List.of(entries));
        }
        if (type instanceof StructType struct) {
            List<Field> children = new ArrayList<>();
            for (StructField field : struct.fields()) {
                children.add(field(field.name(), field.dataType(), field.nullable(),
                        field.metadata(), timezone));
            }
            return new Field(name, new FieldType(nullable, ArrowType.Struct.INSTANCE, null,
                    metadata), children);
        }
        if (type instanceof VariantType) {
            return new Field(name, new FieldType(nullable, ArrowType.Struct.INSTANCE, null,
                    metadata), List.of(
                    leaf("value", ArrowType.Binary.INSTANCE, false, null),
                    leaf("metadata", ArrowType.Binary.INSTANCE, false, Map.of("variant", "true"))));
        }
        if (type instanceof GeometryType || type instanceof GeographyType) {
            String kind = type instanceof GeometryType ? "geometry" : "geography";
            int srid = type instanceof GeometryType g ? g.srid() : ((GeographyType) type).srid();
            return new Field(name, new FieldType(nullable, ArrowType.Struct.INSTANCE, null,
                    metadata), List.of(
                    leaf("srid", new ArrowType.Int(32, true), false, null),
                    leaf("wkb", ArrowType.Binary.INSTANCE, false,
                            Map.of(kind, "true", "srid", Integer.toString(srid)))));
        }
        return leaf(name, atomic(type, timezone), nullable, metadata);
    }

    private static Field leaf(String name, ArrowType type, boolean nullable,
                              Map<String, String> metadata) {
        return new Field(name, new FieldType(nullable, type, null, metadata), null);
    }

    private static ArrowType atomic(DataType type, String timezone) {
        if (type instanceof BooleanType) {
            return ArrowType.Bool.INSTANCE;
        } else if (type instanceof ByteType) {
            return new ArrowType.Int(8, true);
        } else if (type instanceof ShortType) {
            return new ArrowType.Int(16, true);
        } else if (type instanceof IntegerType) {
            return new ArrowType.Int(32, true);
        } else if (type instanceof LongType) {
            return new ArrowType.Int(64, true);
        } else if (type instanceof FloatType) {
            return new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
        } else if (type instanceof DoubleType) {
            return new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
        } else if (type instanceof DecimalType decimal) {
            return new ArrowType.Decimal(decimal.precision(), decimal.scale(), 128);
        } else if (type instanceof StringType && !(type instanceof CharType)
                && !(type instanceof VarcharType)) {
            return ArrowType.Utf8.INSTANCE;
        } else if (type instanceof BinaryType) {
            return ArrowType.Binary.INSTANCE;
        } else if (type instanceof DateType) {
            return new ArrowType.Date(DateUnit.DAY);
        } else if (type instanceof TimestampType) {
            if (timezone == null) {
                throw new IllegalArgumentException("a TimestampType column needs a time zone");
            }
            return new ArrowType.Timestamp(TimeUnit.MICROSECOND, timezone);
        } else if (type instanceof TimestampNTZType) {
            return new ArrowType.Timestamp(TimeUnit.MICROSECOND, null);
        } else if (type instanceof DayTimeIntervalType) {
            return new ArrowType.Duration(TimeUnit.MICROSECOND);
        } else if (type instanceof TimeType) {
            return new ArrowType.Time(TimeUnit.NANOSECOND, 64);
        } else if (type instanceof NullType) {
            return ArrowType.Null.INSTANCE;
        }
        throw new IllegalArgumentException("UNSUPPORTED_DATA_TYPE_FOR_ARROW_CONVERSION: "
                + type.simpleString() + " has no Arrow type in the sink's mapping");
    }

    private static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (IOException broken) {
            throw new UncheckedIOException(broken);
        }
    }

    /**
     * The JSON of Spark metadata as pyspark stores it there: ", " and ": "
     * separators, non-ASCII and control characters as lowercase \\uXXXX.
     * Floats follow Java's shortest repr, which a Python writer may spell
     * otherwise (1e+20 vs 1.0E20): Spark metadata rarely holds floats.
     */
    static final class PythonJson {

        private PythonJson() {
        }

        static String dumps(JsonNode node) {
            StringBuilder out = new StringBuilder();
            write(node, out);
            return out.toString();
        }

        private static void write(JsonNode node, StringBuilder out) {
            if (node.isObject()) {
                out.append('{');
                Iterator<Map.Entry<String, JsonNode>> entries = node.fields();
                boolean first = true;
                while (entries.hasNext()) {
                    Map.Entry<String, JsonNode> entry = entries.next();
                    out.append(first ? "" : ", ");
                    first = false;
                    string(entry.getKey(), out);
                    out.append(": ");
                    write(entry.getValue(), out);
                }
                out.append('}');
            } else if (node.isArray()) {
                out.append('[');
                for (int i = 0; i < node.size(); i++) {
                    out.append(i == 0 ? "" : ", ");
                    write(node.get(i), out);
                }
                out.append(']');
            } else if (node.isTextual()) {
                string(node.textValue(), out);
            } else if (node.isBoolean()) {
                out.append(node.booleanValue() ? "true" : "false");
            } else if (node.isNull()) {
                out.append("null");
            } else {
                out.append(node.asText());
            }
        }

        private static void string(String text, StringBuilder out) {
            out.append('"');
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    case '\b' -> out.append("\\b");
                    case '\f' -> out.append("\\f");
                    default -> {
                        if (c < 0x20 || c > 0x7e) {
                            out.append(String.format("\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                    }
                }
            }
            out.append('"');
        }
    }
}
