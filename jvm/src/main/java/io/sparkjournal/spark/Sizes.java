package io.sparkjournal.spark;

import java.math.BigDecimal;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Sizes as options write them (10m, 490k, 1.5g, bytes), parsed as the Python
 * side parses them: a number, a fraction allowed, then an optional unit b, k,
 * m, g or t (a trailing b allowed after the others, any case; powers of 1024),
 * blanks around; the bytes truncated to a whole number. A size past 2^63 - 1
 * bytes is refused as not valid (no option's bounds reach it; it must never
 * wrap into a small one).
 */
final class Sizes {

    private static final Pattern NUMBER = Pattern.compile("^\\s*(\\d+(?:\\.\\d+)?)\\s*([a-zA-Z]*)\\s*$");
    private static final Map<String, Long> UNITS = Map.of("", 1L, "b", 1L, "k", 1L << 10, "kb", 1L << 10,
            "m", 1L << 20, "mb", 1L << 20, "g", 1L << 30, "gb", 1L << 30, "t", 1L << 40, "tb", 1L << 40);

    private Sizes() {
    }

    /** Bytes; an {@link OptionException} naming the option and what it accepts otherwise. */
    static long parse(String name, String value, String accepts) {
        Matcher match = NUMBER.matcher(value == null ? "" : value);
        Long unit = match.matches() ? UNITS.get(match.group(2).toLowerCase()) : null;
        if (unit == null) {
            throw OptionException.invalid(name, value, accepts);
        }
        java.math.BigInteger bytes = new BigDecimal(match.group(1)).multiply(BigDecimal.valueOf(unit))
                .toBigInteger();
        if (bytes.bitLength() > 63) {
            throw OptionException.invalid(name, value, accepts);
        }
        return bytes.longValue();
    }
}
