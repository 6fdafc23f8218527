package io.sparkjournal.spark;

import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.CodePoints;
import java.io.Serializable;
import java.sql.Date;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * One comparison a read can prune stored records with (EVENTS.md,
 * "Statistics", reader requirements): a metadata column is one value per
 * record (exact), an event column has the record's [min, max] when the
 * writer stored them (LaneEvents.statistics: timestamps in their own unit,
 * dates in days, floats as doubles). {@link #mayMatchRange} and
 * {@link #mayMatchConstant} must never say false for a record that holds a
 * matching row; anything they cannot compare exactly keeps the record.
 *
 * <p>A timestamp literal (microseconds) is converted to the column's unit
 * without losing the fraction that decides a comparison: in a coarser unit a
 * literal between two whole values t and t + 1 is matched by values up to t
 * for {@code <} and {@code <=}, from t + 1 for {@code >} and {@code >=}; for
 * {@code =} and {@code in} such a literal, and a literal a finer unit cannot
 * hold (overflow), keeps the record (EVENTS.md: a literal a reader cannot
 * convert exactly keeps the record). Numbers compare exactly (a long against a double by their
 * exact values, so 0.0 equals -0.0). Float statistics do not count NaN,
 * which Spark orders above every number and equal to itself: on a float
 * column {@code >}, {@code >=}, and a NaN literal, never prune.
 */
final class RecordFilter implements Serializable {

    private static final long serialVersionUID = 1L;
    /** The metadata columns with one value per stored record: all but the last, _row (read_columns.RECORD_METADATA). */
    static final List<String> METADATA = recordMetadata();

    private final String column;
    private final String op;              // = < <= > >= in
    private final List<Object> values;    // Long (integers, times as us, dates as days), Double, String
    private final boolean time;           // the column holds instants (us); dates hold days

    private RecordFilter(String column, String op, List<Object> values, boolean time) {
        this.column = column;
        this.op = op;
        this.values = values;
        this.time = time;
    }

    /** The filter as a comparison, or null when pruning cannot use it. */
    static RecordFilter from(Filter filter, StructType schema) {
        String op;
        String column;
        Object[] raw;
        if (filter instanceof EqualTo f) {
            op = "="; column = f.attribute(); raw = new Object[] {f.value()};
        } else if (filter instanceof LessThan f) {
            op = "<"; column = f.attribute(); raw = new Object[] {f.value()};
        } else if (filter instanceof LessThanOrEqual f) {
            op = "<="; column = f.attribute(); raw = new Object[] {f.value()};
        } else if (filter instanceof GreaterThan f) {
            op = ">"; column = f.attribute(); raw = new Object[] {f.value()};
        } else if (filter instanceof GreaterThanOrEqual f) {
            op = ">="; column = f.attribute(); raw = new Object[] {f.value()};
        } else if (filter instanceof In f) {
            op = "in"; column = f.attribute(); raw = f.values();
        } else {
            return null;
        }
        StructField field = field(schema, column);
        if (field == null) {
            return null;
        }
        List<Object> values = new ArrayList<>();
        for (Object value : raw) {
            Object comparable = comparable(value);
            if (comparable == null) {
                return null;                       // a null or a type pruning does not compare
            }
            values.add(comparable);
        }
        DataType type = field.dataType();
        return new RecordFilter(column, op, values,
                type.equals(DataTypes.TimestampType) || type.equals(DataTypes.TimestampNTZType));
    }

    /** The read options' starting point: exact comparisons on the metadata columns. */
    static List<RecordFilter> startingPoint(ReadOptions options) {
        List<RecordFilter> found = new ArrayList<>();
        if (options.startingBatchId() != null) {
            found.add(new RecordFilter(Constants.MetadataColumns.BATCH_ID, ">=",
                    List.of(options.startingBatchId()), false));
        }
        if (options.startingTimeMicros() != null) {
            found.add(new RecordFilter(Constants.MetadataColumns.COMMIT_TIME, ">=",
                    List.of(options.startingTimeMicros()), true));
        }
        return found;
    }

    private static List<String> recordMetadata() {
        List<String> names = new ArrayList<>();
        for (StructField field : JournalSchema.metadata().fields()) {
            names.add(field.name());
        }
        return List.copyOf(names.subList(0, names.size() - 1));
    }

    String column() {
        return column;
    }

    boolean onMetadata() {
        return METADATA.contains(column);
    }

    /**
     * Whether a record may hold a matching row: {@code constant} is the
     * column's value for the whole record (a metadata column; null: unknown,
     * which no comparison matches), {@code bounds} the record's [min, max] of
     * an event column in its stored unit ({@code unitPerSecond} for times;
     * null bounds: none stored).
     */
    boolean mayMatchConstant(Object constant) {
        if (constant == null) {
            return false;
        }
        for (Object value : values) {
            Integer order = compare(constant, value);
            if (order == null) {
                return true;
            }
            if (holds(order)) {
                return true;
            }
        }
        return false;
    }

    boolean mayMatchRange(Object low, Object high, long unitPerSecond) {
        boolean floats = low instanceof Double || high instanceof Double;
        if (floats && (op.equals(">") || op.equals(">="))) {
            return true;                           // NaN rows, which the bounds leave out, match
        }
        for (Object raw : values) {
            if (floats && raw instanceof Double d && d.isNaN()) {
                return true;
            }
            if (time && raw instanceof Long micros && unitPerSecond != 1_000_000L) {
                if (mayMatchTime(low, high, micros, unitPerSecond)) {
                    return true;
                }
                continue;
            }
            Integer belowHigh = compare(low, raw);
            Integer aboveLow = compare(high, raw);
            if (belowHigh == null || aboveLow == null) {
                return true;
            }
            if (holdsBetween(op, belowHigh, aboveLow)) {
                return true;
            }
        }
        return false;
    }

    /** Whether some v in [low, high] satisfies v op value, given low vs value and high vs value. */
    private static boolean holdsBetween(String op, int lowOrder, int highOrder) {
        return switch (op) {
            case "=", "in" -> lowOrder <= 0 && highOrder >= 0;
            case "<" -> lowOrder < 0;
            case "<=" -> lowOrder <= 0;
            case ">" -> highOrder > 0;
            case ">=" -> highOrder >= 0;
            default -> true;
        };
    }

    /**
     * {@link #mayMatchRange} of one literal of {@code micros} against bounds
     * in a unit of {@code unitPerSecond} (1, 1000, 10^9; 10^6 never comes here).
     */
    private boolean mayMatchTime(Object low, Object high, long micros, long unitPerSecond) {
        long whole;
        boolean exact;
        if (unitPerSecond > 1_000_000L) {
            if (unitPerSecond % 1_000_000L != 0) {
                return true;
            }
            try {
                whole = Math.multiplyExact(micros, unitPerSecond / 1_000_000L);
            } catch (ArithmeticException tooFar) {
                return true;                       // not a value of the column's unit: keep
            }
            exact = true;
        } else {
            if (unitPerSecond <= 0 || 1_000_000L % unitPerSecond != 0) {
                return true;
            }
            long per = 1_000_000L / unitPerSecond;
            whole = Math.floorDiv(micros, per);
            exact = Math.floorMod(micros, per) == 0;
        }
        if (exact) {
            Integer lowOrder = compare(low, whole);
            Integer highOrder = compare(high, whole);
            return lowOrder == null || highOrder == null || holdsBetween(op, lowOrder, highOrder);
        }
        // the literal lies strictly between whole and whole + 1 (whole < Long.MAX_VALUE here)
        Integer order = switch (op) {
            case "<", "<=" -> compare(low, whole);           // some v <= whole
            case ">", ">=" -> compare(high, whole + 1);      // some v >= whole + 1
            default -> null;                                  // = / in: not convertible, keep
        };
        if (order == null) {
            return true;
        }
        return switch (op) {
            case "<", "<=" -> order <= 0;
            case ">", ">=" -> order >= 0;
            default -> true;
        };
    }

    private boolean holds(int order) {
        return switch (op) {
            case "=", "in" -> order == 0;
            case "<" -> order < 0;
            case "<=" -> order <= 0;
            case ">" -> order > 0;
            case ">=" -> order >= 0;
            default -> true;
        };
    }

    /**
     * a compared to b, or null when they cannot be compared exactly (then
     * nothing is pruned): longs as longs, a double against anything by exact
     * value (BigDecimal; -0.0 equals 0.0), an infinity above or below every
     * finite number, NaN never.
     */
    private static Integer compare(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            boolean xWhole = x instanceof Long || x instanceof Integer;
            boolean yWhole = y instanceof Long || y instanceof Integer;
            if (xWhole && yWhole) {
                return Long.compare(x.longValue(), y.longValue());
            }
            if (!(xWhole || x instanceof Double) || !(yWhole || y instanceof Double)) {
                return null;
            }
            double dx = x.doubleValue();
            double dy = y.doubleValue();
            if (Double.isNaN(dx) || Double.isNaN(dy)) {
                return null;
            }
            if (!xWhole && Double.isInfinite(dx) || !yWhole && Double.isInfinite(dy)) {
                return dx == dy ? 0 : dx < dy ? -1 : 1;
            }
            java.math.BigDecimal bx = xWhole ? java.math.BigDecimal.valueOf(x.longValue()) : new java.math.BigDecimal(dx);
            java.math.BigDecimal by = yWhole ? java.math.BigDecimal.valueOf(y.longValue()) : new java.math.BigDecimal(dy);
            return Integer.signum(bx.compareTo(by));
        }
        if (a instanceof String x && b instanceof String y) {
            return Integer.signum(CodePoints.compare(x, y));
        }
        return null;
    }


    private static Object comparable(Object value) {
        if (value instanceof Byte || value instanceof Short || value instanceof Integer || value instanceof Long) {
            return ((Number) value).longValue();
        }
        if (value instanceof Float || value instanceof Double) {
            return ((Number) value).doubleValue();
        }
        if (value instanceof String text) {
            return text;
        }
        if (value instanceof Timestamp stamp) {
            return micros(stamp.toInstant());
        }
        if (value instanceof Instant instant) {
            return micros(instant);
        }
        if (value instanceof Date date) {
            return date.toLocalDate().toEpochDay();
        }
        if (value instanceof LocalDate date) {
            return date.toEpochDay();
        }
        return null;
    }

    private static long micros(Instant instant) {
        return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L), instant.getNano() / 1000L);
    }

    private static StructField field(StructType schema, String name) {
        for (StructField field : schema.fields()) {
            if (field.name().equals(name)) {
                return field;
            }
        }
        return null;
    }

    /** Whether a record may match every filter: the metadata constants and the record's stats. */
    static boolean mayMatchAll(List<RecordFilter> filters, RecordFacts constants,
                               Map<String, Object[]> stats, Map<String, Long> unitsPerSecond) {
        for (RecordFilter filter : filters) {
            if (filter.onMetadata()) {
                if (!filter.mayMatchConstant(constants.value(filter.column))) {
                    return false;
                }
            } else {
                Object[] bounds = stats.get(filter.column);
                if (bounds != null && !filter.mayMatchRange(bounds[0], bounds[1],
                        unitsPerSecond.getOrDefault(filter.column, 1_000_000L))) {
                    return false;
                }
            }
        }
        return true;
    }
}
