package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;

import io.sparkjournal.journal.PythonRepr;

/**
 * Python's {@code str()} and {@code repr()} of the values the decoders meet, so
 * that a value Python converts with {@code str(v)} (a decision's query, an
 * XID's log) is the same string in Java, and messages quote as Python's do
 * ({@code {name!r}}, {@code {magic!r}}).
 *
 * <p>Exact for strings, bytes, integers, booleans and null; floats use the
 * shortest digits that read back as the same double, as Python's repr does
 * (it may differ in the last digit for a double at a power-of-two boundary).
 */
public final class PyRepr {

    private PyRepr() {
    }

    /** Python's {@code repr(text)}. */
    public static String str(String text) {
        return PythonRepr.str(text);
    }

    /** Python's {@code repr(bytes)}: b'...'. */
    public static String bytes(byte[] data) {
        return PythonRepr.bytes(data);
    }

    /** Python's {@code repr(float)}. */
    public static String floatRepr(double d) {
        return PythonRepr.floatRepr(d);
    }

    /** Python's {@code str(v)} of a decoded JSON value. */
    public static String strOf(JsonNode value) {
        return value.isTextual() ? value.textValue() : reprOf(value);
    }

    /** Python's {@code repr(v)} of a decoded JSON value. */
    public static String reprOf(JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return "None";
        }
        if (value.isBoolean()) {
            return value.booleanValue() ? "True" : "False";
        }
        if (value.isIntegralNumber()) {
            return value.bigIntegerValue().toString();
        }
        if (value.isNumber()) {
            return floatRepr(value.doubleValue());
        }
        if (value.isTextual()) {
            return str(value.textValue());
        }
        StringBuilder out = new StringBuilder();
        if (value.isArray()) {
            out.append('[');
            for (int i = 0; i < value.size(); i++) {
                out.append(i == 0 ? "" : ", ").append(reprOf(value.get(i)));
            }
            return out.append(']').toString();
        }
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, JsonNode> entry : value.properties()) {
            out.append(first ? "" : ", ").append(str(entry.getKey())).append(": ")
                    .append(reprOf(entry.getValue()));
            first = false;
        }
        return out.append('}').toString();
    }




}
