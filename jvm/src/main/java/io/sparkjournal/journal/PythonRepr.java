package io.sparkjournal.journal;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Python's {@code repr()} of strings, bytes and floats, and its str order, the
 * one place the JVM side spells them, so that messages quote values as Python's do
 * ({@code {name!r}}) and values Python turns into text read the same. Exact
 * for strings and bytes; floats use the shortest digits that read back as the
 * same double, as Python's repr does (it may differ in the last digit for a
 * double at a power-of-two boundary).
 */
public final class PythonRepr {

    private PythonRepr() {
    }

    /** Python's {@code repr(text)}. */
    public static String str(String text) {
        char quote = text.indexOf('\'') >= 0 && text.indexOf('"') < 0 ? '"' : '\'';
        StringBuilder out = new StringBuilder().append(quote);
        for (int i = 0; i < text.length(); ) {
            int c = text.codePointAt(i);
            i += Character.charCount(c);
            if (escaped(c, quote, out)) {
                continue;
            } else if (c == 0x7f) {
                out.append(String.format("\\x%02x", c));
            } else if (c < 0x7f || printable(c)) {
                out.appendCodePoint(c);
            } else if (c <= 0xff) {
                out.append(String.format("\\x%02x", c));
            } else if (c <= 0xffff) {
                out.append(String.format("\\u%04x", c));
            } else {
                out.append(String.format("\\U%08x", c));
            }
        }
        return out.append(quote).toString();
    }

    /** Python's {@code repr(bytes)}: b'...'. */
    public static String bytes(byte[] data) {
        boolean single = false;
        boolean dbl = false;
        for (byte b : data) {
            single |= b == '\'';
            dbl |= b == '"';
        }
        char quote = single && !dbl ? '"' : '\'';
        StringBuilder out = new StringBuilder("b").append(quote);
        for (byte b : data) {
            int c = b & 0xff;
            if (escaped(c, quote, out)) {
                continue;
            } else if (c >= 0x7f) {
                out.append(String.format("\\x%02x", c));
            } else {
                out.append((char) c);
            }
        }
        return out.append(quote).toString();
    }

    /** The escapes str and bytes reprs share: the quote, backslash and C0 controls. */
    private static boolean escaped(int c, char quote, StringBuilder out) {
        if (c == quote || c == '\\') {
            out.append('\\').appendCodePoint(c);
        } else if (c == '\t') {
            out.append("\\t");
        } else if (c == '\n') {
            out.append("\\n");
        } else if (c == '\r') {
            out.append("\\r");
        } else if (c < ' ') {
            out.append(String.format("\\x%02x", c));
        } else {
            return false;
        }
        return true;
    }

    /** Python's str.isprintable() for one code point above ASCII. */
    static boolean printable(int c) {
        switch (Character.getType(c)) {
            case Character.CONTROL:
            case Character.FORMAT:
            case Character.SURROGATE:
            case Character.PRIVATE_USE:
            case Character.UNASSIGNED:
            case Character.LINE_SEPARATOR:
            case Character.PARAGRAPH_SEPARATOR:
            case Character.SPACE_SEPARATOR:
                return false;
            default:
                return true;
        }
    }

    /** Python's {@code repr(float)}. */
    public static String floatRepr(double d) {
        if (Double.isNaN(d)) {
            return "nan";
        }
        if (Double.isInfinite(d)) {
            return d > 0 ? "inf" : "-inf";
        }
        if (d == 0) {
            return (Double.doubleToRawLongBits(d) < 0 ? "-" : "") + "0.0";
        }
        BigDecimal exact = new BigDecimal(d);
        BigDecimal shortest = exact;
        for (int precision = 1; precision <= 17; precision++) {
            BigDecimal candidate = exact.round(new MathContext(precision, RoundingMode.HALF_EVEN));
            if (candidate.doubleValue() == d) {
                shortest = candidate;
                break;
            }
        }
        BigDecimal stripped = shortest.stripTrailingZeros();
        String digits = stripped.unscaledValue().abs().toString();
        int decimalPoint = digits.length() - stripped.scale();     // |d| = 0.digits * 10^it
        String sign = d < 0 ? "-" : "";
        if (decimalPoint > 16 || decimalPoint < -3) {
            String mantissa = digits.length() == 1 ? digits
                    : digits.charAt(0) + "." + digits.substring(1);
            int exponent = decimalPoint - 1;
            return sign + mantissa + "e" + (exponent < 0 ? "-" : "+")
                    + String.format("%02d", Math.abs(exponent));
        }
        if (decimalPoint <= 0) {
            return sign + "0." + "0".repeat(-decimalPoint) + digits;
        }
        if (decimalPoint >= digits.length()) {
            return sign + digits + "0".repeat(decimalPoint - digits.length()) + ".0";
        }
        return sign + digits.substring(0, decimalPoint) + "." + digits.substring(decimalPoint);
    }

    /** Python's str order: by code point (Java's compareTo orders UTF-16 units). */
    public static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}
