package io.sparkjournal.journal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonFactoryBuilder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkjournal.format.FormatVersionException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The one JSON reader of the JVM side (JSON.md, "Reader requirements"): every
 * JSON file or body is parsed by {@link #parse} into a plain Jackson tree
 * (nothing bound to classes, nothing evaluated) and its fields are taken with
 * the typed getters below (JSON.md requirement 6). Every refusal, of the bytes
 * or of a field, is a {@link Refused} saying what is wrong; the caller names
 * its file and turns it into its structure's error kind (JSON.md, "Error
 * kinds"). Thread-safe.
 */
public final class StrictJson {

    /** The deepest nesting of arrays and objects accepted (JSON.md requirement 5). */
    public static final int MAX_DEPTH = 32;
    /** The longest number accepted, in digits (JSON.md requirement 2). */
    public static final int MAX_NUMBER_DIGITS = 4300;
    private static final BigInteger U64_LIMIT = BigInteger.ONE.shiftLeft(64);

    private static final ObjectMapper MAPPER = new ObjectMapper(factory())
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY);

    private static JsonFactory factory() {
        return new JsonFactoryBuilder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_DEPTH)
                        .maxNumberLength(MAX_NUMBER_DIGITS)
                        .maxNameLength(Integer.MAX_VALUE)       // names and strings: no limit but
                        .maxStringLength(Integer.MAX_VALUE)     // the file's (JSON.md)
                        .build())
                .build();
    }

    private StrictJson() {
    }

    /** A refused JSON file, body or field: the bytes, or a value, are not what the spec allows. */
    public static final class Refused extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message);
        }

        Refused(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The one value {@code raw} holds (JSON.md requirements 1 to 5): UTF-8
     * without a byte-order mark, one RFC 8259 value and only whitespace around
     * it, names once per object, no lone surrogate escapes, no number with a
     * fraction or exponent beyond the largest finite double ({@code 1e400}:
     * requirement 2), at most {@link #MAX_DEPTH} deep. Anything else is refused.
     */
    public static JsonNode parse(byte[] raw) {
        if (raw.length >= 3 && (raw[0] & 0xff) == 0xef && (raw[1] & 0xff) == 0xbb
                && (raw[2] & 0xff) == 0xbf) {
            throw new Refused("it starts with a byte-order mark, which JSON files must not");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw)).toString();
        } catch (CharacterCodingException notUtf8) {
            throw new Refused("it is not UTF-8", notUtf8);
        }
        JsonNode tree;
        try {
            tree = MAPPER.readTree(text);
        } catch (StreamConstraintsException tooDeep) {
            throw new Refused("it is not JSON this format reads: "
                    + tooDeep.getOriginalMessage(), tooDeep);
        } catch (JsonProcessingException notJson) {
            throw new Refused("it is not JSON: " + firstLine(notJson.getOriginalMessage()), notJson);
        }
        if (tree == null || tree.isMissingNode()) {
            throw new Refused("it holds no JSON value");
        }
        refuseLoneSurrogatesAndInfinities(tree);
        return tree;
    }

    /**
     * Checks that {@code value} is an object whose {@code format} is an
     * integer equal to {@code known} (JSON.md requirement 7: this is the first
     * field looked at). A format above {@code known} is a
     * FormatVersionException naming {@code what} at {@code where}; a missing,
     * mistyped or lower one is refused.
     */
    public static void format(JsonNode value, int known, String what, String where)
            throws FormatVersionException {
        requireObject(value, "the file");
        JsonNode format = value.get("format");
        if (format == null) {
            throw new Refused("it has no \"format\"");
        }
        if (!format.isIntegralNumber()) {
            throw new Refused("its \"format\" is " + kind(format) + ", not an integer");
        }
        BigInteger found = format.bigIntegerValue();
        if (found.compareTo(BigInteger.valueOf(known)) > 0) {
            throw new FormatVersionException(what, where,
                    found.bitLength() > 63 ? Long.MAX_VALUE : found.longValue(), known);
        }
        if (found.intValue() != known || found.bitLength() > 31) {
            throw new Refused("its \"format\" is " + found + "; this reader reads format " + known);
        }
    }

    /** Refuses {@code value} unless it is an object; {@code what} names it in the message. */
    public static JsonNode requireObject(JsonNode value, String what) {
        if (value == null || !value.isObject()) {
            throw new Refused(what + " is " + kind(value) + ", not an object");
        }
        return value;
    }

    /** The field {@code name} of {@code object}, of any type; refused when absent. */
    public static JsonNode required(JsonNode object, String name) {
        JsonNode value = object.get(name);
        if (value == null) {
            throw new Refused("\"" + name + "\" is missing");
        }
        return value;
    }

    /** An integer field in 0 .. 2^64 - 1, as a long holding its 64 bits (compare unsigned). */
    public static long u64(JsonNode object, String name) {
        return u64Value(required(object, name), "\"" + name + "\"");
    }

    /** As {@link #u64(JsonNode, String)}, {@code absent} when the field is absent. */
    public static long u64(JsonNode object, String name, long absent) {
        return object.has(name) ? u64(object, name) : absent;
    }

    /** {@code value} (named {@code what} in messages) as an integer in 0 .. 2^64 - 1, held in 64 bits. */
    public static long u64Value(JsonNode value, String what) {
        BigInteger found = integerValue(value, what);
        if (found.signum() < 0 || found.compareTo(U64_LIMIT) >= 0) {
            throw new Refused(what + " is " + found + ", outside 0 .. 2^64 - 1");
        }
        return found.longValue();
    }

    /**
     * An integer field of u64 range that this reader holds as a long: 0 .. 2^63 - 1.
     * A value in 2^63 .. 2^64 - 1, which no writer writes, is refused as beyond what
     * this reader handles.
     */
    public static long whole(JsonNode object, String name) {
        return integer(required(object, name), "\"" + name + "\"", 0, Long.MAX_VALUE);
    }

    /** As {@link #whole(JsonNode, String)}, {@code absent} when the field is absent. */
    public static long whole(JsonNode object, String name, long absent) {
        return object.has(name) ? whole(object, name) : absent;
    }

    /** {@code value} as an integer in {@code least .. most}. */
    public static long integer(JsonNode value, String what, long least, long most) {
        BigInteger found = integerValue(value, what);
        if (found.compareTo(BigInteger.valueOf(least)) < 0
                || found.compareTo(BigInteger.valueOf(most)) > 0) {
            throw new Refused(what + " is " + found + ", outside " + least + " .. " + most
                    + (most == Long.MAX_VALUE ? " (the range this reader handles)" : ""));
        }
        return found.longValue();
    }

    /** {@code value} as an integer of any size: a number without fraction or exponent. */
    public static BigInteger integerValue(JsonNode value, String what) {
        if (value == null || !value.isIntegralNumber()) {
            throw new Refused(what + " is " + kind(value) + ", not an integer");
        }
        return value.bigIntegerValue();
    }

    /** A string field; refused when absent or of another type. */
    public static String string(JsonNode object, String name) {
        return stringValue(required(object, name), "\"" + name + "\"");
    }

    /** As {@link #string(JsonNode, String)}, {@code absent} when the field is absent. */
    public static String string(JsonNode object, String name, String absent) {
        return object.has(name) ? string(object, name) : absent;
    }

    /** {@code value} as a string. */
    public static String stringValue(JsonNode value, String what) {
        if (value == null || !value.isTextual()) {
            throw new Refused(what + " is " + kind(value) + ", not a string");
        }
        return value.textValue();
    }

    /** A boolean field ({@code true} or {@code false}), {@code absent} when the field is absent. */
    public static boolean bool(JsonNode object, String name, boolean absent) {
        JsonNode value = object.get(name);
        if (value == null) {
            return absent;
        }
        if (!value.isBoolean()) {
            throw new Refused("\"" + name + "\" is " + kind(value) + ", not true or false");
        }
        return value.booleanValue();
    }

    /** A list field (a JSON array); refused when absent or of another type. */
    public static JsonNode array(JsonNode object, String name) {
        return arrayValue(required(object, name), "\"" + name + "\"");
    }

    /** {@code value} as a list (a JSON array). */
    public static JsonNode arrayValue(JsonNode value, String what) {
        if (value == null || !value.isArray()) {
            throw new Refused(what + " is " + kind(value) + ", not a list");
        }
        return value;
    }

    /** An object field; refused when absent or of another type. */
    public static JsonNode object(JsonNode object, String name) {
        return requireObject(required(object, name), "\"" + name + "\"");
    }

    /** What {@code value} is, for messages: "a string", "null", "an integer", ... */
    public static String kind(JsonNode value) {
        if (value == null || value.isMissingNode()) {
            return "absent";
        }
        if (value.isNull()) {
            return "null";
        }
        if (value.isBoolean()) {
            return value.booleanValue() ? "true" : "false";
        }
        if (value.isIntegralNumber()) {
            return "an integer";
        }
        if (value.isNumber()) {
            return "a number with a fraction or exponent";
        }
        if (value.isTextual()) {
            return "a string";
        }
        return value.isArray() ? "a list" : "an object";
    }

    private static void refuseLoneSurrogatesAndInfinities(JsonNode value) {
        if (value.isTextual()) {
            refuseLoneSurrogates(value.textValue());
        } else if (value.isNumber() && !value.isIntegralNumber()) {
            if (!Double.isFinite(value.doubleValue())) {
                throw new Refused("it holds a number beyond the largest finite double ("
                        + value.asText() + "), which no writer writes");
            }
        } else if (value.isArray()) {
            for (JsonNode item : value) {
                refuseLoneSurrogatesAndInfinities(item);
            }
        } else if (value.isObject()) {
            for (Map.Entry<String, JsonNode> field : value.properties()) {
                refuseLoneSurrogates(field.getKey());
                refuseLoneSurrogatesAndInfinities(field.getValue());
            }
        }
    }

    private static void refuseLoneSurrogates(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new Refused("a string in it holds a lone surrogate (\\u"
                        + String.format("%04x", (int) c) + "), which is not text");
            }
        }
    }

    private static String firstLine(String message) {
        String text = String.valueOf(message);
        int newline = text.indexOf('\n');
        return newline < 0 ? text : text.substring(0, newline);
    }
}
