package io.sparkjournal.spark;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

import java.util.HashMap;
import java.util.Map;

/** {@link WriteOptions} resolves a JVM write's option strings by the options' one definition
 *  (the kinds, bounds and defaults the jar carries), in the words of Python's ConfigError. */
public final class WriteOptionsTest {

    private WriteOptionsTest() {
    }

    public static void testStringsResolveAsLoadConfigResolvesThem() {
        WriteOptions options = parse("path", "/j", "FILESIZE", "64k", "bufferSize", "16k",
                "dirMode", "0750", "laneIdleTimeout", "10s", "createDirs", "no",
                "journalType", "nio", "retention", "7d", "txnAppId", "app", "txnVersion", "3");
        equal(65536L, options.journal().get("fileSize"), "64k");
        equal(16384L, options.journal().get("bufferSize"), "16k");
        equal(0750L, options.journal().get("dirMode"), "0750");
        equal(10_000_000_000L, options.journal().get("laneIdleTimeout"), "10s in ns");
        equal(false, options.journal().get("createDirs"), "no");
        equal("NIO", options.journal().get("journalType"), "a choice, any case");
        equal(10L << 20, parse("path", "/j").journal().get("fileSize"), "the default, 10m");
        equal(-1L, parse("path", "/j").journal().get("maxSizeBytes"), "the default, -1");
        equal("app", options.txnAppId(), "txnAppId");
        equal(3L, options.txnVersion(), "txnVersion");
        equal("AUTO", options.writer(), "writer's default");
    }

    public static void testBadValuesAreRefusedNamingTheOptionAndWhatItAccepts() {
        contains(raises(OptionException.class, () -> parse("path", "/j", "fileSize", "5000"))
                .getMessage(), "option fileSize='5000' is not valid: fileSize accepts a multiple of 4k");
        contains(raises(OptionException.class, () -> parse("path", "/j", "dirMode", "0777"))
                .getMessage(), "option dirMode='0777' is not valid", "o-w");
        contains(raises(OptionException.class, () -> parse("path", "/j", "txnVersion", "-1"))
                .getMessage(), "option txnVersion='-1' is not valid", "from 0 up");
        contains(raises(OptionException.class, () -> parse("path", "/j", "txnAppId", "_mine"))
                .getMessage(), "option txnAppId='_mine' is not valid");
        contains(raises(OptionException.class, () -> parse("path", "/j", "retention", "forever"))
                .getMessage(), "option retention='forever' is not valid");
        contains(raises(OptionException.class, () -> parse("path", "/j", "fileSiz", "10m"))
                .getMessage(), "option fileSiz='10m' is not valid", "not a sparkjournal option",
                "fileSize");
        contains(raises(OptionException.class, () -> parse("path", "/j", "fileSize", "64k"))
                .getMessage(), "option bufferSize=501760 is not valid", "below fileSize - 4096");
        contains(raises(OptionException.class, () -> parse("fileSize", "64k")).getMessage(),
                "needs a path");
    }

    /** Every journal option is the JVM writer's own: size limits, policies, large records
     *  and modes off their defaults are no refusal, their values kept. */
    public static void testEveryJournalOptionIsWrittenByTheJvmWriter() {
        WriteOptions options = parse("path", "/j", "maxSizeBytes", "1g", "maxRootSizeBytes", "2g",
                "addressFullPolicy", "block", "largeRecordSize", "64k", "fileMode", "0600");
        equal(1L << 30, options.journal().get("maxSizeBytes"), "maxSizeBytes");
        equal("BLOCK", options.journal().get("addressFullPolicy"), "addressFullPolicy");
        equal(65536L, options.journal().get("largeRecordSize"), "largeRecordSize");
        equal("PYTHON", WriteOptions.writer(Map.of("Writer", "python")), "the fallback's choice");
    }

    /** dirMode and fileMode are the JVM writer's own (DiskModes): no refusal, the values kept. */
    public static void testModesOffTheirDefaultsAreWrittenByTheJvmWriter() {
        WriteOptions options = parse("path", "/j", "dirMode", "0700", "fileMode", "0600");
        equal(0700L, options.journal().get("dirMode"), "dirMode");
        equal(0600L, options.journal().get("fileMode"), "fileMode");
    }

    private static WriteOptions parse(String... pairs) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            options.put(pairs[i], pairs[i + 1]);
        }
        return WriteOptions.parse(options);
    }
}
