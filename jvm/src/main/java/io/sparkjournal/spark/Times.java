package io.sparkjournal.spark;

import java.math.BigDecimal;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Times as options write them (500us, 3ms, 1.5s, a bare number of
 * nanoseconds), parsed as the Python side parses them: units ns, us, ms, s
 * in any case, a fraction allowed, nothing negative.
 * A time past 2^63 - 1 ns (some 292 years) is taken as 2^63 - 1.
 */
final class Times {

    private static final Pattern NUMBER = Pattern.compile("^\\s*(\\d+(?:\\.\\d+)?)\\s*([a-zA-Z]*)\\s*$");
    private static final Map<String, Long> UNITS = Map.of("", 1L, "ns", 1L, "us", 1_000L, "ms", 1_000_000L,
            "s", 1_000_000_000L);
    private static final BigDecimal MOST = BigDecimal.valueOf(Long.MAX_VALUE);

    private Times() {
    }

    /** Nanoseconds; an {@link OptionException} naming the option and what it accepts otherwise. */
    static long nanos(String name, String value, String accepts) {
        Matcher match = NUMBER.matcher(value == null ? "" : value);
        Long unit = match.matches() ? UNITS.get(match.group(2).toLowerCase()) : null;
        if (unit == null) {
            throw OptionException.invalid(name, value, accepts);
        }
        return new BigDecimal(match.group(1)).multiply(BigDecimal.valueOf(unit)).min(MOST).longValue();
    }
}
