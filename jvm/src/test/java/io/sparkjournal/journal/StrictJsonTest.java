package io.sparkjournal.journal;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.format.FormatVersionException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@link StrictJson} accepts and refuses what JSON.md's reader requirements say, one test per rule;
 *  {@link CanonicalJson} writes JSON.md's canonical form. */
public final class StrictJsonTest {

    private StrictJsonTest() {
    }

    private static JsonNode parse(String text) {
        return StrictJson.parse(text.getBytes(StandardCharsets.UTF_8));
    }

    private static void refused(String text, String why) {
        refused(text.getBytes(StandardCharsets.UTF_8), why);
    }

    private static void refused(byte[] raw, String why) {
        raises(StrictJson.Refused.class, () -> StrictJson.parse(raw));
        isTrue(true, why);
    }

    public static void testRule1OneUtf8ValueWithWhitespaceAround() {
        equal(1, parse(" \t\r\n{\"a\": [1, \"\u00e9\"]} \n").get("a").get(0).intValue(), "whitespace around");
        equal("\u00e9\uD83D\uDE00", parse("\"\u00e9\uD83D\uDE00\"").textValue(), "UTF-8 text");
        refused("{} x", "bytes after the value");
        refused("{}{}", "a second value");
        refused("1 2", "two numbers");
        refused("", "no value");
        refused("  ", "only whitespace");
        refused("\f{}", "form feed is not JSON whitespace");
        refused("{}\u00a0", "no-break space is not JSON whitespace");
        refused(new byte[] {(byte) 0xef, (byte) 0xbb, (byte) 0xbf, '{', '}'}, "a byte-order mark");
        refused(new byte[] {'"', (byte) 0xc3, '"'}, "a truncated sequence");
        refused(new byte[] {'"', (byte) 0xff, '"'}, "a byte that is never UTF-8");
        refused(new byte[] {'"', (byte) 0xc0, (byte) 0xaf, '"'}, "an overlong encoding");
        refused(new byte[] {'"', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '"'}, "an encoded surrogate");
        refused(new byte[] {0, '{', 0, '}'}, "UTF-16 is not UTF-8");
        contains(raises(StrictJson.Refused.class, () -> parse("{} x")).getMessage(), "not JSON");
    }

    public static void testRule2JsonOnly() {
        for (String text : new String[] {"NaN", "Infinity", "-Infinity", "[NaN]", "{\"a\": -Infinity}",
                "{\"a\": 1 /* c */}", "// c\n1", "# c\n1", "'a'", "{'a': 1}", "{a: 1}", "[1,]", "{\"a\": 1,}",
                "01", "-01", "[00]", "+1", ".5", "1.", "0x10", "\"\t\"", "True", "None", "[1 2]"}) {
            refused(text, text);
        }
        equal(-0.5, parse("-0.5e0").doubleValue(), "a number with fraction and exponent is JSON");
        equal(0, parse("-0").intValue(), "-0 is JSON");
    }

    public static void testRule2RefusesANumberBeyondTheLargestDouble() {
        for (String text : new String[] {"1e400", "-1e400", "[1.5e309]", "{\"a\": {\"b\": 2E+999}}",
                "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792.0"}) {
            contains(raises(StrictJson.Refused.class, () -> parse(text)).getMessage(), "largest finite double");
        }
        equal(Double.MAX_VALUE, parse("1.7976931348623157e308").doubleValue(), "the largest double is JSON");
        equal(0.0, parse("1e-400").doubleValue(), "a number below the smallest double is JSON (it rounds)");
        isTrue(parse("100000000000000000000000000000000000000000000000000").isIntegralNumber(),
                "a long integer has no fraction or exponent: rule 6 judges it per field");
    }

    public static void testRule2RefusesANumberOfMoreThan4300DigitsAndNoLongText() {
        for (String text : new String[] {"[1" + "0".repeat(4300) + "]", "[1." + "0".repeat(4300) + "]"}) {
            raises(StrictJson.Refused.class, () -> parse(text));
        }
        JsonNode long_ = parse("{\"" + "n".repeat(60_000) + "\": \"" + "v".repeat(100_000) + "\"}");
        equal(100_000, long_.get("n".repeat(60_000)).textValue().length(), "long names and strings are JSON");
    }

    public static void testRule3NamesOnce() {
        refused("{\"a\": 1, \"a\": 1}", "the same value twice");
        refused("{\"a\": 1, \"b\": {\"c\": 1, \"c\": 2}}", "nested");
        refused("{\"a\": 1, \"\\u0061\": 2}", "the same name escaped");
        equal(2, parse("[{\"a\": 1}, {\"a\": 2}]").size(), "one name in two objects");
    }

    public static void testRule4StringsAreText() {
        refused("\"\\ud800\"", "a lone high surrogate");
        refused("\"\\udc00\"", "a lone low surrogate");
        refused("\"\\ud800x\"", "a high surrogate not followed by a low one");
        refused("\"\\udc00\\ud800\"", "the pair reversed");
        refused("{\"\\ud800\": 1}", "in a name");
        refused("[[\"\\udfff\"]]", "nested");
        equal("\uD83D\uDE00", parse("\"\\ud83d\\ude00\"").textValue(), "an escaped pair is text");
    }

    public static void testRule5AtMost32Deep() {
        String deep = "[".repeat(StrictJson.MAX_DEPTH) + "]".repeat(StrictJson.MAX_DEPTH);
        isTrue(parse(deep).isArray(), "32 deep");
        refused("[" + deep + "]", "33 deep");
        refused("{\"a\":" + "[".repeat(32) + "]".repeat(32) + "}", "33 deep through an object");
        refused("[".repeat(100000), "far too deep");
    }

    public static void testRule6TypedFields() {
        JsonNode data = parse("{\"i\": 7, \"big\": 18446744073709551615, \"over\": 18446744073709551616, "
                + "\"neg\": -1, \"f\": 1.0, \"e\": 1e0, \"s\": \"1\", \"t\": true, \"n\": null, "
                + "\"l\": [], \"o\": {}}");
        equal(7L, StrictJson.u64(data, "i"), "an integer");
        equal(-1L, StrictJson.u64(data, "big"), "2^64 - 1 held in 64 bits");
        equal(7L, StrictJson.whole(data, "i"), "a whole number");
        for (String name : new String[] {"over", "neg", "f", "e", "s", "t", "n", "l", "o", "absent"}) {
            raises(StrictJson.Refused.class, () -> StrictJson.u64(data, name));
        }
        contains(raises(StrictJson.Refused.class, () -> StrictJson.whole(data, "big")).getMessage(),
                "\"big\"", "18446744073709551615");
        contains(raises(StrictJson.Refused.class, () -> StrictJson.u64(data, "f")).getMessage(),
                "\"f\" is a number with a fraction or exponent, not an integer");
        contains(raises(StrictJson.Refused.class, () -> StrictJson.u64(data, "absent")).getMessage(),
                "\"absent\" is missing");
        equal(5L, StrictJson.whole(data, "absent", 5), "an optional integer takes its default");
        raises(StrictJson.Refused.class, () -> StrictJson.whole(data, "n", 5));

        equal("1", StrictJson.string(data, "s"), "a string");
        for (String name : new String[] {"i", "n", "t", "l", "absent"}) {
            raises(StrictJson.Refused.class, () -> StrictJson.string(data, name));
        }
        equal("d", StrictJson.string(data, "absent", "d"), "an optional string takes its default");
        raises(StrictJson.Refused.class, () -> StrictJson.string(data, "n", "d"));

        isTrue(StrictJson.bool(data, "t", false), "a boolean");
        isTrue(StrictJson.bool(data, "absent", true), "an optional boolean takes its default");
        for (String name : new String[] {"i", "s", "n"}) {
            raises(StrictJson.Refused.class, () -> StrictJson.bool(data, name, false));
        }
        raises(StrictJson.Refused.class, () -> StrictJson.bool(parse("{\"b\": 1}"), "b", false));

        isTrue(StrictJson.array(data, "l").isArray(), "a list");
        isTrue(StrictJson.object(data, "o").isObject(), "an object");
        raises(StrictJson.Refused.class, () -> StrictJson.array(data, "o"));
        raises(StrictJson.Refused.class, () -> StrictJson.object(data, "l"));
        raises(StrictJson.Refused.class, () -> StrictJson.array(data, "n"));
        equal(4294967295L, StrictJson.integer(parse("4294967295"), "x", 0, 0xffffffffL), "a field's own range");
        raises(StrictJson.Refused.class, () -> StrictJson.integer(parse("4294967296"), "x", 0, 0xffffffffL));
    }

    public static void testRule7FormatFirstAndUnknownNamesIgnored() throws Exception {
        StrictJson.format(parse("{\"format\": 1, \"unknown\": [1.5, null]}"), 1, "thing", "/f");
        FormatVersionException newer = raises(FormatVersionException.class,
                () -> StrictJson.format(parse("{\"format\": 2, \"other\": \"not even typed\"}"), 1, "thing", "/f"));
        equal(2L, newer.found(), "the newer format");
        contains(newer.getMessage(), "/f");
        equal(Long.MAX_VALUE, raises(FormatVersionException.class, () -> StrictJson.format(
                parse("{\"format\": 99999999999999999999}"), 1, "thing", "/f")).found(), "beyond a long");
        for (String text : new String[] {"{}", "{\"format\": 0}", "{\"format\": -1}", "{\"format\": 1.0}",
                "{\"format\": \"1\"}", "{\"format\": true}", "{\"format\": null}", "[1]", "1"}) {
            raises(StrictJson.Refused.class, () -> StrictJson.format(parse(text), 1, "thing", "/f"));
        }
    }

    public static void testTheCanonicalFormSortsByCodePointWithoutWhitespace() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("\uD83D\uDE00", 1);
        value.put("\uFFFF", 2);
        value.put("b", List.of(-3L, true, false, "x"));
        value.put("a", null);
        value.put("n", new java.math.BigInteger("18446744073709551615"));
        equal("{\"a\":null,\"b\":[-3,true,false,\"x\"],\"n\":18446744073709551615,\"\uFFFF\":2,"
                + "\"\uD83D\uDE00\":1}", CanonicalJson.text(value), "code point order, no whitespace");
        equal("\"q\\\"\\\\\\u0000\\u000a\\u001f\u007f\u00e9\"", CanonicalJson.text("q\"\\\u0000\n\u001f\u007f\u00e9"),
                "only quote, backslash and U+0000..U+001F escaped, lowercase hex");
        equal("\u00e9".getBytes(StandardCharsets.UTF_8).length + 2, CanonicalJson.bytes("\u00e9").length,
                "other characters as UTF-8");
        raises(IllegalArgumentException.class, () -> CanonicalJson.text("\uD800"));
        raises(IllegalArgumentException.class, () -> CanonicalJson.text(1.5));
    }

    public static void testWhatTheCanonicalWriterWritesReadsBackAsTheSameValues() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("s", "\u0001\"\\\u00e9\uD83D\uDE00/");
        value.put("i", Long.MIN_VALUE);
        value.put("l", List.of(List.of(), Map.of()));
        JsonNode read = StrictJson.parse(CanonicalJson.bytes(value));
        equal(value.get("s"), read.get("s").textValue(), "the string");
        equal(Long.MIN_VALUE, read.get("i").longValue(), "the integer");
        equal("[[],{}]", read.get("l").toString(), "the nesting");
    }
}
