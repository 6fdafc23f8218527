package io.sparkjournal.journal;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

import java.util.Map;

/** {@link AppendConfig#fromOptions} takes Python's option names and resolved values, and
 *  refuses anything else naming the option. */
public final class AppendConfigTest {

    private AppendConfigTest() {
    }

    public static void testFromOptionsAppliesPythonsNamesOverTheDefaults() {
        AppendConfig config = AppendConfig.fromOptions(Map.of("fileSize", 65536,
                "bufferSize", 8192L, "deviceBlockSize", 4096, "maxIO", 3, "userVersion", 9));
        equal(new AppendConfig(65536, 8192, 4096, 3, 9), config, "config");
        equal(3L * 8192, config.syncWindow(), "sync window");
        equal(AppendConfig.defaults(), AppendConfig.fromOptions(Map.of()), "config of no options");
        equal(10L << 20, AppendConfig.defaults().fileSize(), "default file size");
    }

    public static void testFromOptionsRefusesAnUnknownKeyNamingIt() {
        contains(raises(IllegalArgumentException.class,
                () -> AppendConfig.fromOptions(Map.of("filesize", 65536))).getMessage(),
                "option filesize is not an option", "fileSize");
    }

    public static void testFromOptionsRefusesUnitTextAndFractionsNamingTheKey() {
        contains(raises(IllegalArgumentException.class,
                () -> AppendConfig.fromOptions(Map.of("fileSize", "10m"))).getMessage(),
                "option fileSize = 10m", "not a resolved integer");
        contains(raises(IllegalArgumentException.class,
                () -> AppendConfig.fromOptions(Map.of("maxIO", 2.0))).getMessage(),
                "option maxIO = 2.0");
    }

    public static void testValuesTheJournalCannotWorkWithAreRefusedNamingTheKey() {
        refused(Map.of("bufferSize", 5000), "option bufferSize = 5000 is refused");
        refused(Map.of("fileSize", 4096), "option fileSize = 4096 is refused");
        refused(Map.of("fileSize", 8192, "bufferSize", 8192), "option bufferSize = 8192 is refused",
                "fileSize is 8192");
        refused(Map.of("deviceBlockSize", 768), "option deviceBlockSize = 768 is refused");
        refused(Map.of("maxIO", 0), "option maxIO = 0 is refused");
        refused(Map.of("userVersion", 1L << 32), "option userVersion = 4294967296 is refused");
    }

    /** {@code options} are refused with a message holding every one of {@code said}. */
    private static void refused(Map<String, Object> options, String... said) {
        contains(raises(IllegalArgumentException.class,
                () -> AppendConfig.fromOptions(options)).getMessage(), said);
    }
}
