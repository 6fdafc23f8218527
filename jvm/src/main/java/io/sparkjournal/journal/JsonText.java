package io.sparkjournal.journal;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON as Python's {@code json} module reads it, for the compaction control
 * file (ControlFile), whose CRC-32C covers Python's canonical form of the
 * parsed object: to check it, the object must be parsed into values that
 * PythonText can write back exactly as Python writes them.
 *
 * <p>{@link #parse} accepts what {@code json.loads} accepts: objects (a
 * repeated key keeps its first place and its last value), arrays, strings
 * (control characters refused, escapes as JSON, lone surrogates kept), numbers
 * (an integer is a {@link BigInteger}, one with a fraction or exponent a
 * {@link Double}), true/false, null ({@link #NULL}), NaN, Infinity and
 * -Infinity; anything else, or text after the value, throws
 * IllegalArgumentException with a message shaped like Python's (the same
 * kind of error; the words may differ). Nothing is evaluated. PythonText
 * writes such values back as Python does.
 */
final class JsonText {

    /** JSON null. */
    static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "None";
        }
    };

    private static final int MAX_DEPTH = 900;

    private final String text;
    private int at;

    private JsonText(String text) {
        this.text = text;
    }

    /** The value {@code text} holds (see the class). */
    static Object parse(String text) {
        JsonText parser = new JsonText(text);
        parser.skipSpace();
        Object value = parser.value(0);
        parser.skipSpace();
        if (parser.at != text.length()) {
            throw parser.error("Extra data");
        }
        return value;
    }

    private Object value(int depth) {
        if (depth > MAX_DEPTH) {
            throw new IllegalArgumentException("maximum recursion depth exceeded");
        }
        if (at >= text.length()) {
            throw error("Expecting value");
        }
        char c = text.charAt(at);
        switch (c) {
            case '{': return object(depth);
            case '[': return array(depth);
            case '"': at++; return string();
            default: break;
        }
        if (text.startsWith("null", at)) { at += 4; return NULL; }
        if (text.startsWith("true", at)) { at += 4; return Boolean.TRUE; }
        if (text.startsWith("false", at)) { at += 5; return Boolean.FALSE; }
        if (text.startsWith("NaN", at)) { at += 3; return Double.NaN; }
        if (text.startsWith("Infinity", at)) { at += 8; return Double.POSITIVE_INFINITY; }
        if (text.startsWith("-Infinity", at)) { at += 9; return Double.NEGATIVE_INFINITY; }
        return number();
    }

    private Map<String, Object> object(int depth) {
        Map<String, Object> out = new LinkedHashMap<>();
        at++;
        skipSpace();
        if (peek() == '}') {
            at++;
            return out;
        }
        while (true) {
            if (peek() != '"') {
                throw error("Expecting property name enclosed in double quotes");
            }
            at++;
            String key = string();
            skipSpace();
            if (peek() != ':') {
                throw error("Expecting ':' delimiter");
            }
            at++;
            skipSpace();
            out.put(key, value(depth + 1));
            skipSpace();
            char c = peek();
            at++;
            if (c == '}') {
                return out;
            }
            if (c != ',') {
                at--;
                throw error("Expecting ',' delimiter");
            }
            skipSpace();
        }
    }

    private List<Object> array(int depth) {
        List<Object> out = new ArrayList<>();
        at++;
        skipSpace();
        if (peek() == ']') {
            at++;
            return out;
        }
        while (true) {
            out.add(value(depth + 1));
            skipSpace();
            char c = peek();
            at++;
            if (c == ']') {
                return out;
            }
            if (c != ',') {
                at--;
                throw error("Expecting ',' delimiter");
            }
            skipSpace();
        }
    }

    private String string() {
        StringBuilder out = new StringBuilder();
        while (true) {
            if (at >= text.length()) {
                throw error("Unterminated string starting at");
            }
            char c = text.charAt(at++);
            if (c == '"') {
                return out.toString();
            }
            if (c < 0x20) {
                at--;
                throw error("Invalid control character at");
            }
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = at < text.length() ? text.charAt(at++) : 0;
            switch (e) {
                case '"': out.append('"'); break;
                case '\\': out.append('\\'); break;
                case '/': out.append('/'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'n': out.append('\n'); break;
                case 'r': out.append('\r'); break;
                case 't': out.append('\t'); break;
                case 'u': out.append(hex4()); break;
                default: at--; throw error("Invalid \\escape");
            }
        }
    }

    private char hex4() {
        if (at + 4 > text.length()) {
            throw error("Invalid \\uXXXX escape");
        }
        try {
            char c = (char) Integer.parseInt(text.substring(at, at + 4), 16);
            at += 4;
            return c;
        } catch (NumberFormatException bad) {
            throw error("Invalid \\uXXXX escape");
        }
    }

    private Object number() {
        int start = at;
        if (peek() == '-') {
            at++;
        }
        if (peek() == '0') {
            at++;
        } else if (Character.isDigit(peek()) && peek() < 0x80) {
            digits();
        } else {
            at = start;
            throw error("Expecting value");
        }
        int intEnd = at;
        boolean real = false;
        if (peek() == '.' && at + 1 < text.length() && isAsciiDigit(text.charAt(at + 1))) {
            at++;
            digits();
            real = true;
        }
        if ((peek() == 'e' || peek() == 'E')) {
            int mark = at++;
            if (peek() == '+' || peek() == '-') {
                at++;
            }
            if (isAsciiDigit(peek())) {
                digits();
                real = true;
            } else {
                at = mark;
            }
        }
        String literal = text.substring(start, at);
        return real ? (Object) Double.valueOf(literal)
                : new BigInteger(text.substring(start, intEnd));
    }

    private void digits() {
        while (isAsciiDigit(peek())) {
            at++;
        }
    }

    private static boolean isAsciiDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private char peek() {
        return at < text.length() ? text.charAt(at) : 0;
    }

    private void skipSpace() {
        while (at < text.length() && " \t\n\r".indexOf(text.charAt(at)) >= 0) {
            at++;
        }
    }

    private IllegalArgumentException error(String what) {
        int line = 1;
        int lineStart = 0;
        for (int i = 0; i < at && i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                line++;
                lineStart = i + 1;
            }
        }
        return new IllegalArgumentException(what + ": line " + line + " column "
                + (at - lineStart + 1) + " (char " + at + ")");
    }
}
