package io.sparkjournal.journal;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The canonical form of JSON (JSON.md, "Writer requirements"): object names
 * sorted by code point, no whitespace, integers in plain decimal, strings with
 * only {@code "}, {@code \} and U+0000..U+001F escaped (as a backslash, u and four lowercase hex digits),
 * lowercase) and every other character as its UTF-8 bytes. It is what a
 * control file's CRC covers, and what the JVM writes wherever it writes JSON
 * (commit log entries, checkpoints, XIDs).
 *
 * <p>Takes plain values: null, Boolean, Integer, Long, BigInteger, String,
 * List and Map with String keys. A float, any other type, or a string holding
 * a lone surrogate (not text) is an IllegalArgumentException: no structure of
 * this format holds one, and writing it would not read back.
 */
public final class CanonicalJson {

    private CanonicalJson() {
    }

    /** The canonical UTF-8 bytes of {@code value}. */
    public static byte[] bytes(Object value) {
        return text(value).getBytes(StandardCharsets.UTF_8);
    }

    /** The canonical text of {@code value} (its UTF-8 encoding is {@link #bytes}). */
    public static String text(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object value, StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Boolean) {
            out.append(((Boolean) value) ? "true" : "false");
        } else if (value instanceof Long || value instanceof Integer || value instanceof BigInteger) {
            out.append(value);
        } else if (value instanceof String) {
            string((String) value, out);
        } else if (value instanceof List) {
            out.append('[');
            boolean first = true;
            for (Object item : (List<?>) value) {
                out.append(first ? "" : ",");
                first = false;
                write(item, out);
            }
            out.append(']');
        } else if (value instanceof Map) {
            Map<?, ?> map = (Map<?, ?>) value;
            List<String> names = new ArrayList<>();
            for (Object name : map.keySet()) {
                names.add((String) name);
            }
            names.sort(CodePoints::compare);
            out.append('{');
            boolean first = true;
            for (String name : names) {
                out.append(first ? "" : ",");
                first = false;
                string(name, out);
                out.append(':');
                write(map.get(name), out);
            }
            out.append('}');
        } else {
            throw new IllegalArgumentException("no canonical JSON for a "
                    + value.getClass().getSimpleName());
        }
    }

    private static void string(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                out.append(String.format("\\u%04x", (int) c));
            } else if (Character.isHighSurrogate(c) && i + 1 < text.length()
                    && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException("a string holding a lone surrogate is not text");
            } else {
                out.append(c);
            }
        }
        out.append('"');
    }
}
