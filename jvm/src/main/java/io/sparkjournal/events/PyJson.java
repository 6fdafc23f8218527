package io.sparkjournal.events;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Set;

/**
 * The JSON files of the events layer (commit log entries, XIDs, lane requests,
 * record stats) read as Python's {@code json.loads} reads them, and the few
 * Python value rules the decoders apply to what they find ({@code int(v)},
 * {@code type(v) is int}, {@code v == 1}, truthiness, {@code str(v)}), so that
 * Java accepts, refuses and converts exactly the values Python does.
 *
 * <p>Only plain JSON trees are built: nothing is bound to classes, nothing is
 * evaluated. Like {@code json.loads}: NaN and (-)Infinity are accepted, trailing
 * data is refused, the last of duplicate keys wins, integers keep every digit
 * (up to Python's 4300-digit limit), nesting stops near Python's recursion
 * limit (1000). Two passes: the first refuses the non-finite spellings Jackson
 * reads and Python does not.
 */
public final class PyJson {

    private PyJson() {
    }

    private static final int PY_INT_MAX_DIGITS = 4300;

    /** The non-finite numbers json.loads reads (Jackson also reads +Infinity, -INF, +INF). */
    private static final Set<String> PYTHON_NON_NUMBERS = Set.of("NaN", "Infinity", "-Infinity");

    private static final ObjectMapper MAPPER = new ObjectMapper(factory())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    private static JsonFactory factory() {
        return new JsonFactoryBuilder()
                .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNumberLength(PY_INT_MAX_DIGITS)
                        .maxNestingDepth(1000)
                        .build())
                .build();
    }

    /** The shared mapper, for writing trees. */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /** The tree of {@code raw}; IOException (Jackson's) where json.loads raises ValueError. */
    public static JsonNode parse(byte[] raw) throws IOException {
        try (JsonParser tokens = MAPPER.getFactory().createParser(raw)) {
            for (JsonToken token = tokens.nextToken(); token != null; token = tokens.nextToken()) {
                if (token == JsonToken.VALUE_NUMBER_FLOAT && tokens.isNaN()
                        && !PYTHON_NON_NUMBERS.contains(tokens.getText())) {
                    throw new IOException("Expecting value: " + tokens.getText()
                            + " is not a number Python's json reads");
                }
            }
        }
        JsonNode tree = MAPPER.readTree(raw);
        if (tree == null || tree.isMissingNode()) {
            throw new IOException("Expecting value: line 1 column 1 (char 0)");
        }
        return tree;
    }

    /** Python's {@code type(v) is int}: a JSON integer, not a boolean nor a float. */
    public static boolean isInt(JsonNode value) {
        return value != null && value.isIntegralNumber();
    }

    /** Python's {@code v == 1} for a decoded JSON value: 1, 1.0 and true are equal to 1. */
    public static boolean equalsOne(JsonNode value) {
        if (value == null) {
            return false;
        }
        if (value.isBoolean()) {
            return value.booleanValue();
        }
        if (value.isIntegralNumber()) {
            return value.bigIntegerValue().equals(BigInteger.ONE);
        }
        return value.isFloatingPointNumber() && value.doubleValue() == 1.0;
    }

    /** Python's truthiness: null, false, 0, 0.0, "", [] and {} are false. */
    public static boolean truthy(JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return false;
        }
        if (value.isBoolean()) {
            return value.booleanValue();
        }
        if (value.isIntegralNumber()) {
            return value.bigIntegerValue().signum() != 0;
        }
        if (value.isNumber()) {
            return value.doubleValue() != 0.0;
        }
        if (value.isTextual()) {
            return !value.textValue().isEmpty();
        }
        return value.size() > 0;
    }

    /**
     * Python's {@code int(v)}: integers as they are, booleans 0/1, floats
     * truncated toward zero, strings of decimal digits (surrounding whitespace,
     * a sign and single underscores between digits allowed). Python's ValueError
     * and TypeError are IllegalArgumentException; int(inf) is OverflowError,
     * here ArithmeticException.
     */
    public static BigInteger toInt(JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            throw new IllegalArgumentException("int() argument must be a string, a bytes-like "
                    + "object or a real number, not 'NoneType'");
        }
        if (value.isBoolean()) {
            return value.booleanValue() ? BigInteger.ONE : BigInteger.ZERO;
        }
        if (value.isIntegralNumber()) {
            return value.bigIntegerValue();
        }
        if (value.isNumber()) {
            double d = value.doubleValue();
            if (Double.isNaN(d)) {
                throw new IllegalArgumentException("cannot convert float NaN to integer");
            }
            if (Double.isInfinite(d)) {
                throw new ArithmeticException("cannot convert float infinity to integer");
            }
            return new BigDecimal(d).toBigInteger();
        }
        if (value.isTextual()) {
            return parseInt(value.textValue(), true);
        }
        throw new IllegalArgumentException("int() argument must be a string, a bytes-like "
                + "object or a real number, not '" + (value.isArray() ? "list" : "dict") + "'");
    }

    /**
     * Python's {@code int(text)} in base 10. {@code unicode}: a str (any Unicode
     * decimal digit and whitespace); else bytes (ASCII digits and whitespace).
     */
    public static BigInteger parseInt(String text, boolean unicode) {
        int start = 0;
        int end = text.length();
        while (start < end && isSpace(text.charAt(start), unicode)) {
            start++;
        }
        while (end > start && isSpace(text.charAt(end - 1), unicode)) {
            end--;
        }
        StringBuilder digits = new StringBuilder();
        int at = start;
        if (at < end && (text.charAt(at) == '+' || text.charAt(at) == '-')) {
            if (text.charAt(at) == '-') {
                digits.append('-');
            }
            at++;
        }
        boolean lastDigit = false;
        int count = 0;
        while (at < end) {
            int c = text.codePointAt(at);
            int digit = unicode ? Character.digit(c, 10) : (c >= '0' && c <= '9' ? c - '0' : -1);
            boolean decimal = !unicode || Character.getType(c) == Character.DECIMAL_DIGIT_NUMBER;
            if (digit >= 0 && decimal) {
                digits.append((char) ('0' + digit));
                lastDigit = true;
                count++;
            } else if (c == '_' && lastDigit && at + 1 < end) {
                lastDigit = false;
            } else {
                throw new IllegalArgumentException("invalid literal for int() with base 10: "
                        + PyRepr.str(text));
            }
            at += Character.charCount(c);
        }
        if (count == 0 || !lastDigit) {
            throw new IllegalArgumentException("invalid literal for int() with base 10: "
                    + PyRepr.str(text));
        }
        if (count > PY_INT_MAX_DIGITS) {
            throw new IllegalArgumentException("Exceeds the limit (4300 digits) for integer "
                    + "string conversion");
        }
        return new BigInteger(digits.toString());
    }

    private static boolean isSpace(char c, boolean unicode) {
        if (c == ' ' || (c >= '\t' && c <= '\r')) {
            return true;
        }
        return unicode && (Character.isWhitespace(c) || Character.isSpaceChar(c) || c == '\u0085');
    }

    /** {@code value} as a long; IllegalArgumentException naming {@code what} if it does not fit. */
    public static long toLong(BigInteger value, String what) {
        if (value.bitLength() > 63) {
            throw new IllegalArgumentException(what + " " + value
                    + " does not fit a 64-bit integer");
        }
        return value.longValue();
    }

    /** A u64 held in a long, as the exact non-negative number. */
    public static BigInteger unsigned(long value) {
        BigInteger v = BigInteger.valueOf(value);
        return value >= 0 ? v : v.add(BigInteger.ONE.shiftLeft(64));
    }
}
