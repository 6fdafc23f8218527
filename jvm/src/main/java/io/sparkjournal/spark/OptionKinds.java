package io.sparkjournal.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A journal or write option's text as its typed value, by the option's one
 * definition (declared once in Python, sparkjournal/config_keys.py: kinds of
 * value, their bounds and the option's default, carried in the jar:
 * {@link OptionNames#kind}), so no name, bound or default is restated here.
 *
 * <p>Contract: {@link #parse} gives, for the same text, the value the Python
 * side parses from it: a Boolean (flag), a Long (whole, size, time in ns, mode
 * bits), an upper-case String (choice), the String (text, and retention,
 * which only its check needs here); anything the kind refuses is an
 * {@link OptionException} in the words of the Python side's ConfigError (the
 * option, the value, what it accepts). {@link #defaultOf} is the typed default (null:
 * not set).
 */
final class OptionKinds {

    private static final Pattern NUMBER = Pattern.compile("^\\s*(\\d+(?:\\.\\d+)?)\\s*([a-zA-Z]*)\\s*$");
    /** units.AGE_UNITS (seconds) and SIZE_UNITS' names: what retention accepts. */
    private static final Map<String, Long> AGE_UNITS = Map.of("s", 1L, "sec", 1L, "min", 60L,
            "h", 3600L, "d", 86400L, "w", 604800L);
    private static final java.util.Set<String> SIZE_UNITS = java.util.Set.of("", "b", "k", "kb",
            "m", "mb", "g", "gb", "t", "tb");

    private OptionKinds() {
    }

    /** The typed value of {@code value} for the option {@code name} (its own spelling). */
    static Object parse(String name, String value) {
        JsonNode kind = kind(name);
        String accepts = kind.get("accepts").asText();
        String text = value == null ? "" : value.strip();
        switch (kind.get("kind").asText()) {
            case "flag":
                return ReadOptions.parseFlag(name, value, accepts);
            case "choice":
                for (JsonNode choice : kind.get("choices")) {
                    if (choice.asText().equals(text.toUpperCase(Locale.ROOT))) {
                        return choice.asText();
                    }
                }
                break;
            case "whole":
                Long whole = whole(text);
                if (whole != null && whole >= kind.get("minimum").asLong()
                        && (kind.get("maximum").isNull() || whole <= kind.get("maximum").asLong())) {
                    return whole;
                }
                break;
            case "size":
                if (kind.get("unlimited").asBoolean() && text.equals("-1")) {
                    return -1L;
                }
                long size = Sizes.parse(name, value, accepts);
                if (inBounds(kind, size)) {
                    return size;
                }
                break;
            case "time":
                return Times.nanos(name, value, accepts);
            case "mode":
                Long bits = mode(text);
                long owner = kind.get("owner").asLong();
                if (bits != null && bits <= 0777 && (bits & owner) == owner && (bits & 02) == 0) {
                    return bits;
                }
                break;
            case "retention":
                if (retention(text.toLowerCase(Locale.ROOT))) {
                    return text;
                }
                break;
            case "text":
                if (valid(kind.get("valid").asText(), value == null ? "" : value)) {
                    return value;
                }
                break;
            default:
                throw new IllegalStateException("option " + name + " has a kind of value this jar "
                        + "does not know: " + kind + "; rebuild it (python -m sparkjournal jar)");
        }
        throw OptionException.invalid(name, value, accepts);
    }

    /** The option's typed default (null: not set unless given). */
    static Object defaultOf(String name) {
        JsonNode value = kind(name).get("default");
        if (value == null || value.isNull()) {
            return null;
        }
        if (value.isBoolean()) {
            return value.asBoolean();
        }
        if (value.isIntegralNumber()) {
            return value.asLong();
        }
        return value.isArray() ? "none" : value.asText();
    }

    private static JsonNode kind(String name) {
        JsonNode kind = OptionNames.kind(name);
        if (kind == null) {
            throw new IllegalStateException("the sparkjournal jar carries no kind of value for option "
                    + name + ": rebuild it (python -m sparkjournal jar)");
        }
        return kind;
    }

    private static Long whole(String text) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException notWhole) {
            return null;
        }
    }

    private static boolean inBounds(JsonNode kind, long size) {
        if (size < kind.get("minimum").asLong()
                || !kind.get("maximum").isNull() && size > kind.get("maximum").asLong()
                || size % kind.get("multiple").asLong() != 0) {
            return false;
        }
        if (kind.get("choices").isEmpty()) {
            return true;
        }
        for (JsonNode choice : kind.get("choices")) {
            if (choice.asLong() == size) {
                return true;
            }
        }
        return false;
    }

    /** config_keys.Mode: octal digits, optionally after 0o. */
    private static Long mode(String text) {
        String digits = text.toLowerCase(Locale.ROOT);
        digits = digits.startsWith("0o") ? digits.substring(2) : digits;
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '7') || digits.length() > 6) {
            return null;
        }
        return Long.parseLong(digits, 8);
    }

    /** A retention value: none, an age or a size with a unit. */
    private static boolean retention(String text) {
        if (text.isEmpty() || text.equals("none") || text.equals("0")) {
            return true;
        }
        Matcher match = NUMBER.matcher(text);
        if (!match.matches()) {
            return false;
        }
        String unit = match.group(2);
        return AGE_UNITS.containsKey(unit) || SIZE_UNITS.contains(unit) && !unit.isEmpty();
    }

    /** config_keys' checks of a Text option, by name. */
    private static boolean valid(String check, String text) {
        boolean segment = !text.isEmpty() && !text.contains("/") && !text.equals(".")
                && !text.equals("..") && text.indexOf('\0') < 0;
        switch (check) {
            case "one_path_segment":
                return segment;
            case "writer_name":
                return segment && !text.startsWith("_") && !text.startsWith("batch-write-");
            case "not_blank":
                return !text.isBlank();
            case "inside_folder":
                return !text.isEmpty() && !text.startsWith("/") && !text.startsWith("\\")
                        && !java.util.Arrays.asList(text.replace('\\', '/').split("/", -1)).contains("..");
            default:
                throw new IllegalStateException("a text option's check " + check + " is not known to "
                        + "this jar; rebuild it (python -m sparkjournal jar)");
        }
    }
}
