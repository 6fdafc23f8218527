package io.sparkjournal.journal;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Values written as Python writes them, where bytes on disk or messages
 * depend on it: the canonical JSON a control file's CRC-32C covers
 * ({@code json.dumps(obj, sort_keys=True, separators=(",", ":"))}: ASCII only,
 * every other character as {@code \\uXXXX}, keys sorted by code point), and
 * Python's repr of the values that appear in error messages and warnings
 * (str, bytes, float, bool, list, dict). Takes the values JsonText parses.
 *
 * <p>Floats are written in Python's repr style from Java's digits, which are
 * not always the shortest (Java 17): a float in a control file may then be
 * judged damaged by one side only; sparkjournal never writes one.
 */
public final class PythonText {

    private PythonText() {
    }

    /** {@code json.dumps(value, sort_keys=True, separators=(",", ":"))}. */
    public static String canonical(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, ",", ":");
        return out.toString();
    }

    /** {@code json.dumps(value, sort_keys=True)}: Python's default separators {@code ", "} and
     *  {@code ": "} (a commit log entry's bytes). Longs and Integers are taken too. */
    public static String dumps(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, ", ", ": ");
        return out.toString();
    }

    private static void write(Object value, StringBuilder out, String items, String keyed) {
        if (value == null || value == JsonText.NULL) {
            out.append("null");
        } else if (value instanceof Boolean) {
            out.append(((Boolean) value) ? "true" : "false");
        } else if (value instanceof BigInteger || value instanceof Long || value instanceof Integer) {
            out.append(value);
        } else if (value instanceof Double) {
            out.append(floatRepr((Double) value, true));
        } else if (value instanceof String) {
            string((String) value, out);
        } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<?>) value) {
                out.append(first ? "" : items);
                first = false;
                write(item, out, items, keyed);
            }
            out.append(']');
        } else {
            Map<?, ?> map = (Map<?, ?>) value;
            List<String> keys = new ArrayList<>();
            for (Object key : map.keySet()) {
                keys.add((String) key);
            }
            keys.sort(PythonRepr::compareCodePoints);
            out.append('{');
            boolean first = true;
            for (String key : keys) {
                out.append(first ? "" : items);
                first = false;
                string(key, out);
                out.append(keyed);
                write(map.get(key), out, items, keyed);
            }
            out.append('}');
        }
    }

    /** A JSON string as Python's json module writes it with ensure_ascii (the default):
     *  printable ASCII as is, the usual escapes, every other UTF-16 unit as \\uXXXX. */
    public static void string(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                default:
                    if (c >= 0x20 && c < 0x7f) {
                        out.append(c);
                    } else {
                        out.append(String.format("\\u%04x", (int) c));
                    }
            }
        }
        out.append('"');
    }

    /** Python's repr of a float (json: NaN, Infinity, -Infinity; repr: nan, inf, -inf). */
    static String floatRepr(double value, boolean json) {
        if (Double.isNaN(value)) {
            return json ? "NaN" : "nan";
        }
        if (Double.isInfinite(value)) {
            return value > 0 ? (json ? "Infinity" : "inf") : (json ? "-Infinity" : "-inf");
        }
        return PythonRepr.floatRepr(value);
    }

    /** Python's repr of a parsed value, for messages ("format '1', expected 1"). */
    static String repr(Object value) {
        if (value instanceof String) {
            return PythonRepr.str((String) value);
        }
        if (value instanceof Boolean) {
            return ((Boolean) value) ? "True" : "False";
        }
        if (value instanceof Double) {
            return floatRepr((Double) value, false);
        }
        if (value instanceof List) {
            StringBuilder out = new StringBuilder("[");
            for (Object item : (List<?>) value) {
                out.append(out.length() > 1 ? ", " : "").append(repr(item));
            }
            return out.append(']').toString();
        }
        if (value instanceof Map) {
            StringBuilder out = new StringBuilder("{");
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                out.append(out.length() > 1 ? ", " : "").append(repr(entry.getKey()))
                        .append(": ").append(repr(entry.getValue()));
            }
            return out.append('}').toString();
        }
        return String.valueOf(value);
    }

    /** Python's repr of a bytes object. */
    static String bytesRepr(byte[] bytes) {
        return PythonRepr.bytes(bytes);
    }
}
