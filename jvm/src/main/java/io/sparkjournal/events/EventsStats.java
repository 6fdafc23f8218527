package io.sparkjournal.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.BaseIntVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The {@code sparkjournal.stats} entry of an EVENTS piece (EVENTS.md,
 * "Statistics", writer requirements and what today's writers choose): JSON
 * {column: [min, max]} in schema order, for integer, floating, timestamp and
 * date columns (times and dates as integers in their own unit), and string
 * columns that pass the short-string test (their Arrow size S in the piece, as
 * {@link ArrowBytes} counts it, at most {@code SHORT_STRING * max(1, rows) + 8 * rows}). A column
 * has no entry when none of its values is non-null, nor when its float min or
 * max is infinite or NaN.
 *
 * <p>Min and max: NaN values are not counted (an all-NaN column gets no
 * entry); of equal values the first one is kept, so the sign of a zero bound
 * may be either (-0.0 and 0.0 compare equal wherever stats are used). Strings
 * order as unsigned bytes, a prefix first. Unsigned 64-bit integers are
 * written as unsigned. Bools, decimals, binary, times of day, durations and
 * nested columns get no entry.
 *
 * <p>A string min or max that is not valid UTF-8 (Spark's strings need not
 * be) gets no entry (EVENTS.md: no entry for a string bound that is not
 * valid UTF-8), so the column is never pruned on; the write goes on.
 *
 * <p>The JSON is ASCII (non-ASCII characters escaped), meeting JSON.md's
 * reader requirements: any reader of the spec reads the same values.
 */
public final class EventsStats {

    /**
     * The 32 of the short-string test (EVENTS.md, "Statistics"): strings of at
     * most this mean length get min/max.
     */
    public static final int SHORT_STRING = 32;

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final ObjectWriter WRITER = new ObjectMapper().writer()
            .with(JsonWriteFeature.ESCAPE_NON_ASCII);

    private EventsStats() {
    }

    /** The stats JSON (ASCII bytes) of all rows of {@code root}. */
    public static byte[] json(VectorSchemaRoot root) {
        return json(root, 0, root.getRowCount());
    }

    /** The stats JSON (ASCII bytes) of rows [start, start + length) of {@code root}. */
    public static byte[] json(VectorSchemaRoot root, int start, int length) {
        try {
            return WRITER
                    .writeValueAsBytes(of(root, start, length));
        } catch (JsonProcessingException impossible) {
            throw new IllegalStateException("stats of plain JSON nodes failed to serialize",
                    impossible);
        }
    }

    /** The stats tree of rows [start, start + length) of {@code root}. */
    public static ObjectNode of(VectorSchemaRoot root, int start, int length) {
        if (start < 0 || length < 0 || start + length > root.getRowCount()) {
            throw new IndexOutOfBoundsException("rows [" + start + ", " + (start + length)
                    + ") of a batch of " + root.getRowCount());
        }
        ObjectNode stats = JSON.objectNode();
        for (FieldVector vector : root.getFieldVectors()) {
            JsonNode[] bounds = bounds(vector, start, length);
            if (bounds != null) {
                stats.set(vector.getName(), JSON.arrayNode().add(bounds[0]).add(bounds[1]));
            }
        }
        return stats;
    }

    /** [min, max] of one column's rows, or null where column_stats writes no entry. */
    static JsonNode[] bounds(FieldVector vector, int start, int length) {
        if (vector instanceof VarCharVector || vector instanceof LargeVarCharVector) {
            long limit = (long) SHORT_STRING * Math.max(1, length) + 8L * length;
            if (ArrowBytes.of(vector, start, length) > limit) {
                return null;
            }
            return strings(vector, start, length);
        }
        if (vector instanceof Float8Vector || vector instanceof Float4Vector) {
            return floats(vector, start, length);
        }
        if (vector instanceof BaseIntVector || vector instanceof TimeStampVector
                || vector instanceof DateDayVector || vector instanceof DateMilliVector) {
            return integers(vector, start, length);
        }
        return null;
    }

    private static JsonNode[] integers(FieldVector vector, int start, int length) {
        boolean unsigned = vector instanceof UInt8Vector;
        long low = 0;
        long high = 0;
        boolean any = false;
        for (int i = start; i < start + length; i++) {
            if (vector.isNull(i)) {
                continue;
            }
            long value = integer(vector, i);
            if (!any) {
                low = value;
                high = value;
                any = true;
            } else if (unsigned) {
                low = Long.compareUnsigned(value, low) < 0 ? value : low;
                high = Long.compareUnsigned(value, high) > 0 ? value : high;
            } else {
                low = Math.min(low, value);
                high = Math.max(high, value);
            }
        }
        if (!any) {
            return null;
        }
        return unsigned ? new JsonNode[] {JSON.numberNode(unsigned(low)), JSON.numberNode(unsigned(high))}
                : new JsonNode[] {JSON.numberNode(low), JSON.numberNode(high)};
    }

    /** A row's value as a long: integers (unsigned ones zero-extended), times and dates raw. */
    private static long integer(FieldVector vector, int i) {
        if (vector instanceof TimeStampVector times) {
            return times.get(i);
        }
        if (vector instanceof DateDayVector days) {
            return days.get(i);
        }
        if (vector instanceof DateMilliVector millis) {
            return millis.get(i);
        }
        if (vector instanceof UInt8Vector u64) {
            return u64.get(i);
        }
        return ((BaseIntVector) vector).getValueAsLong(i);
    }

    private static BigInteger unsigned(long value) {
        return new BigInteger(Long.toUnsignedString(value));
    }

    private static JsonNode[] floats(FieldVector vector, int start, int length) {
        double low = Double.NaN;
        double high = Double.NaN;
        boolean anyValue = false;
        for (int i = start; i < start + length; i++) {
            if (vector.isNull(i)) {
                continue;
            }
            anyValue = true;
            double value = vector instanceof Float8Vector f8 ? f8.get(i)
                    : (double) ((Float4Vector) vector).get(i);
            if (Double.isNaN(value)) {
                continue;
            }
            if (Double.isNaN(low) || value < low) {
                low = value;
            }
            if (Double.isNaN(high) || value > high) {
                high = value;
            }
        }
        if (!anyValue || !Double.isFinite(low) || !Double.isFinite(high)) {
            return null;
        }
        return new JsonNode[] {JSON.numberNode(low), JSON.numberNode(high)};
    }

    private static JsonNode[] strings(FieldVector vector, int start, int length) {
        ArrowBuf data = vector.getDataBuffer();
        int low = -1;
        int high = -1;
        for (int i = start; i < start + length; i++) {
            if (vector.isNull(i)) {
                continue;
            }
            if (low < 0) {
                low = i;
                high = i;
                continue;
            }
            if (compare(vector, data, i, low) < 0) {
                low = i;
            } else if (compare(vector, data, i, high) > 0) {
                high = i;
            }
        }
        if (low < 0) {
            return null;
        }
        String min = text(vector, low);
        String max = text(vector, high);
        if (min == null || max == null) {
            return null;
        }
        return new JsonNode[] {JSON.textNode(min), JSON.textNode(max)};
    }

    private static long offset(FieldVector vector, int i) {
        if (vector instanceof BaseLargeVariableWidthVector) {
            return vector.getOffsetBuffer().getLong((long) i * 8);
        }
        return vector.getOffsetBuffer().getInt((long) i * 4);
    }

    /** Values a and b compared as unsigned bytes, the shorter first where one is a prefix. */
    private static int compare(FieldVector vector, ArrowBuf data, int a, int b) {
        long aStart = offset(vector, a);
        long aEnd = offset(vector, a + 1);
        long bStart = offset(vector, b);
        long bEnd = offset(vector, b + 1);
        long common = Math.min(aEnd - aStart, bEnd - bStart);
        for (long k = 0; k < common; k++) {
            int x = Byte.toUnsignedInt(data.getByte(aStart + k));
            int y = Byte.toUnsignedInt(data.getByte(bStart + k));
            if (x != y) {
                return x < y ? -1 : 1;
            }
        }
        return Long.compare(aEnd - aStart, bEnd - bStart);
    }

    /** A value decoded strictly as UTF-8, or null if it is not UTF-8. */
    private static String text(FieldVector vector, int i) {
        long start = offset(vector, i);
        byte[] raw = new byte[(int) (offset(vector, i + 1) - start)];
        vector.getDataBuffer().getBytes(start, raw);
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException notUtf8) {
            return null;
        }
    }
}
