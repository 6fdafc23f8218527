package io.sparkjournal.spark;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

/** {@link Times} reads times as sparkjournal/units.py does (config_keys.Time), in nanoseconds. */
public final class TimesTest {

    private TimesTest() {
    }

    public static void testTimesTakeUnitsWithoutCaseAndFractions() {
        equal(5_000_000_000L, Times.nanos("t", "5s", "x"), "5s");
        equal(500_000_000L, Times.nanos("t", "500ms", "x"), "500ms");
        equal(500_000L, Times.nanos("t", " 500 US ", "x"), "500 US");
        equal(1_500_000_000L, Times.nanos("t", "1.5s", "x"), "1.5s");
        equal(42L, Times.nanos("t", "42", "x"), "bare nanoseconds");
        equal(42L, Times.nanos("t", "42ns", "x"), "42ns");
        equal(0L, Times.nanos("t", "0s", "x"), "0s");
        equal(Long.MAX_VALUE, Times.nanos("t", "99999999999999s", "x"), "past 2^63 - 1 ns");
    }

    public static void testATimeThatIsNotOneIsRefusedNamingTheOptionAndWhatItAccepts() {
        for (String bad : new String[]{"5 min", "", "-1s", "1e3", "s", "1.s", "5m", "true"}) {
            contains(raises(OptionException.class,
                    () -> Times.nanos("missingHostWait", bad, "a time such as 500us")).getMessage(),
                    "option missingHostWait='" + bad + "' is not valid", "accepts a time such as 500us");
        }
    }
}
