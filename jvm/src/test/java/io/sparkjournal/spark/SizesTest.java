package io.sparkjournal.spark;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

/** {@link Sizes} reads sizes as sparkjournal/units.py does. */
public final class SizesTest {

    private SizesTest() {
    }

    public static void testSizesTakeUnitsWithoutCaseAndFractions() {
        equal(123L, Sizes.parse("s", "123", "x"), "123");
        equal(10L << 20, Sizes.parse("s", "10m", "x"), "10m");
        equal(490L << 10, Sizes.parse("s", "490K", "x"), "490K");
        equal(65536L, Sizes.parse("s", " 64 kb ", "x"), " 64 kb ");
        equal(3L << 29, Sizes.parse("s", "1.5g", "x"), "1.5g");
        equal(1L << 40, Sizes.parse("s", "1TB", "x"), "1TB");
        equal(7L, Sizes.parse("s", "7b", "x"), "7b");
        equal(Long.MAX_VALUE, Sizes.parse("s", "9223372036854775807", "x"), "2^63 - 1");
    }

    public static void testASizeThatIsNotOneIsRefusedNamingTheOptionAndWhatItAccepts() {
        for (String bad : new String[]{"10x", "", "-1m", "1e3", "m", "1.m", "16777216t", "16777217t",
                "9223372036854775808"}) {
            contains(raises(OptionException.class,
                    () -> Sizes.parse("maxBytesPerTrigger", bad, "a size such as 64m")).getMessage(),
                    "option maxBytesPerTrigger='" + bad + "' is not valid",
                    "accepts a size such as 64m");
        }
        contains(raises(OptionException.class, () -> Sizes.parse("s", null, "x")).getMessage(),
                "option s=None is not valid");
    }
}
