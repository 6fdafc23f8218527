package io.sparkjournal.spark;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * How a write may evolve the journal's events schema (the commit log's
 * {@code schema.arrow}, COMMIT_LOG.md), with the same rules and messages
 * whichever writer, JVM or Python, makes the write. The first write fixes the
 * schema; a later one must carry every
 * column with the same type (timestamps compared without their time zone);
 * it may add nullable columns and relax a column to nullable, and those
 * changes are stored. Anything else is a {@link SchemaMismatchException}
 * naming every offending column, both schemas (types as Arrow C++ prints them)
 * and what to do, raised before any task runs. A column named like a
 * metadata column or {@code __sj_row} ({@link #RESERVED}) is refused the
 * same way, whether it would fix the schema or add to it (EVENTS.md,
 * "Reading: the columns"): nothing of such a batch is written.
 */
final class SchemaEvolution {

    /** A write's schema cannot be written into this journal (SchemaMismatchError on the Python side). */
    static final class SchemaMismatchException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        SchemaMismatchException(String message) {
            super(message);
        }
    }

    /**
     * Names no events column may take: the metadata columns a read returns
     * beside the events, in their order, and compaction's column of original
     * positions.
     */
    static final List<String> RESERVED = List.of(
            io.sparkjournal.format.Constants.MetadataColumns.BATCH_ID,
            io.sparkjournal.format.Constants.MetadataColumns.COMMIT_TIME,
            io.sparkjournal.format.Constants.MetadataColumns.HOST,
            io.sparkjournal.format.Constants.MetadataColumns.LANE,
            io.sparkjournal.format.Constants.MetadataColumns.RECORD_ID,
            io.sparkjournal.format.Constants.MetadataColumns.ROW,
            io.sparkjournal.format.Constants.HiddenColumns.ROW_COLUMN);

    private SchemaEvolution() {
    }

    /**
     * Refuses a write whose columns ({@code names}) take a {@link #RESERVED}
     * name: a SchemaMismatchException naming them, {@code where} the write.
     * Called before anything of the write runs.
     */
    static void refuseReserved(List<String> names, String where) {
        List<String> reserved = names.stream().filter(RESERVED::contains).collect(Collectors.toList());
        if (!reserved.isEmpty()) {
            throw new SchemaMismatchException(where + ": column(s) " + String.join(", ", reserved)
                    + " take names reserved for the journal's own columns (" + String.join(", ", RESERVED)
                    + ": the metadata columns a read returns beside the events, and compaction's "
                    + "original positions). Rename them (e.g. df.withColumnRenamed('" + reserved.get(0)
                    + "', 'event" + reserved.get(0) + "')) or drop them; nothing of this batch was written");
        }
    }

    /** The schema to store after accepting {@code incoming}, or null if {@code stored} stays. */
    static Schema evolve(Schema stored, Schema incoming, String where) {
        incoming = new Schema(incoming.getFields());                  // no schema metadata
        refuseReserved(incoming.getFields().stream().map(Field::getName).collect(Collectors.toList()), where);
        if (stored == null) {
            return incoming;
        }
        List<String> problems = new ArrayList<>();
        Map<String, Field> byName = new LinkedHashMap<>();
        for (Field field : incoming.getFields()) {
            byName.put(field.getName(), field);
        }
        List<String> missing = new ArrayList<>();
        List<String> known = new ArrayList<>();
        for (Field field : stored.getFields()) {
            known.add(field.getName());
            if (!byName.containsKey(field.getName())) {
                missing.add(field.getName());
            }
        }
        if (!missing.isEmpty()) {
            problems.add("missing column(s) " + String.join(", ", missing));
        }
        for (Field field : stored.getFields()) {
            Field now = byName.get(field.getName());
            if (now != null && !sameType(now, field, true)) {
                problems.add("column " + field.getName() + " is " + typeName(now) + ", the journal holds "
                        + typeName(field));
            }
        }
        List<Field> added = incoming.getFields().stream().filter(f -> !known.contains(f.getName()))
                .collect(Collectors.toList());
        List<String> required = added.stream().filter(f -> !f.isNullable()).map(Field::getName)
                .collect(Collectors.toList());
        if (!required.isEmpty()) {
            problems.add("new column(s) " + String.join(", ", required) + " are not nullable (older "
                    + "events have no value there; add them as nullable)");
        }
        if (!problems.isEmpty()) {
            throw new SchemaMismatchException(where + ": the batch's schema does not match the journal's: "
                    + String.join("; ", problems) + ". Journal schema: " + describe(stored)
                    + "; batch schema: " + describe(incoming) + ". Write to a new journal path, or cast "
                    + "the batch to the journal's schema");
        }
        List<Field> fields = new ArrayList<>();
        boolean relaxed = false;
        for (Field field : stored.getFields()) {
            boolean relax = !field.isNullable() && byName.get(field.getName()).isNullable();
            relaxed |= relax;
            fields.add(relax ? new Field(field.getName(), org.apache.arrow.vector.types.pojo.FieldType
                    .nullable(field.getType()), field.getChildren()) : field);
        }
        if (added.isEmpty() && !relaxed) {
            return null;
        }
        fields.addAll(added);
        return new Schema(fields);
    }

    /**
     * Equal types for evolution: at the top, a timestamp's zone does not count
     * (same instants, EVENTS.md, "EVENTS records"); nested fields must match in
     * name, nullability and type, zone included.
     */
    private static boolean sameType(Field a, Field b, boolean top) {
        if (top && a.getType() instanceof ArrowType.Timestamp ta && b.getType() instanceof ArrowType.Timestamp tb) {
            return ta.getUnit() == tb.getUnit();
        }
        if (!a.getType().equals(b.getType()) || a.getChildren().size() != b.getChildren().size()) {
            return false;
        }
        for (int i = 0; i < a.getChildren().size(); i++) {
            Field x = a.getChildren().get(i);
            Field y = b.getChildren().get(i);
            if (!x.getName().equals(y.getName()) || x.isNullable() != y.isNullable() || !sameType(x, y, false)) {
                return false;
            }
        }
        return true;
    }

    private static String describe(Schema schema) {
        return schema.getFields().stream().map(f -> f.getName() + " " + typeName(f)
                + (f.isNullable() ? "" : " not null")).collect(Collectors.joining(", "));
    }

    /** Arrow C++'s names of the types without parameters. */
    private static final Map<ArrowType.ArrowTypeID, String> PLAIN_NAMES = Map.of(
            ArrowType.ArrowTypeID.Bool, "bool", ArrowType.ArrowTypeID.Utf8, "string",
            ArrowType.ArrowTypeID.LargeUtf8, "large_string", ArrowType.ArrowTypeID.Binary, "binary",
            ArrowType.ArrowTypeID.LargeBinary, "large_binary", ArrowType.ArrowTypeID.Null, "null");

    /** A field's type as Arrow C++ prints it (int64, string, timestamp[us, tz=UTC], list<element: int64>). */
    static String typeName(Field field) {
        ArrowType type = field.getType();
        List<Field> children = field.getChildren();
        if (type instanceof ArrowType.Int i) {
            return (i.getIsSigned() ? "int" : "uint") + i.getBitWidth();
        } else if (type instanceof ArrowType.FloatingPoint f) {
            return switch (f.getPrecision()) {
                case HALF -> "halffloat";
                case SINGLE -> "float";
                default -> "double";
            };
        } else if (PLAIN_NAMES.containsKey(type.getTypeID())) {
            return PLAIN_NAMES.get(type.getTypeID());
        } else if (type instanceof ArrowType.Date d) {
            return d.getUnit() == DateUnit.DAY ? "date32[day]" : "date64[ms]";
        } else if (type instanceof ArrowType.Timestamp t) {
            return "timestamp[" + unit(t.getUnit()) + (t.getTimezone() == null ? "" : ", tz=" + t.getTimezone()) + "]";
        } else if (type instanceof ArrowType.Decimal d) {
            return "decimal" + d.getBitWidth() + "(" + d.getPrecision() + ", " + d.getScale() + ")";
        } else if (type instanceof ArrowType.List || type instanceof ArrowType.LargeList) {
            return (type instanceof ArrowType.List ? "list<" : "large_list<") + child(children.get(0)) + ">";
        } else if (type instanceof ArrowType.Struct) {
            return "struct<" + children.stream().map(SchemaEvolution::child).collect(Collectors.joining(", ")) + ">";
        } else if (type instanceof ArrowType.Map) {
            List<Field> entries = children.get(0).getChildren();
            return "map<" + typeName(entries.get(0)) + ", " + typeName(entries.get(1)) + ">";
        }
        return type.toString();
    }

    private static String child(Field field) {
        return field.getName() + ": " + typeName(field) + (field.isNullable() ? "" : " not null");
    }

    private static String unit(TimeUnit unit) {
        return switch (unit) {
            case SECOND -> "s";
            case MILLISECOND -> "ms";
            case MICROSECOND -> "us";
            default -> "ns";
        };
    }
}
