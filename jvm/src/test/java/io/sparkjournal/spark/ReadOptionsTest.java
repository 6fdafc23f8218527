package io.sparkjournal.spark;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import java.util.HashMap;
import java.util.Map;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** {@link ReadOptions#parse} checks a read's options by the names the jar carries
 *  ({@link OptionNames}), with the Python reader's messages. */
public final class ReadOptionsTest {

    private ReadOptionsTest() {
    }

    public static void testAnUnknownOptionIsRefusedNamingItAndTheKnownOnes() {
        OptionException refused = raises(OptionException.class,
                () -> parse("path", "/j", "maxRowPerTrigger", "10"));
        contains(refused.getMessage(), "option maxRowPerTrigger='10' is not valid",
                "not a sparkjournal option", "fileSize");
    }

    public static void testOptionsAreMatchedWithoutCaseAndDefaultWhenAbsent() {
        ReadOptions given = parse("path", "/j", "MAXROWSPERTRIGGER", "5", "skipcorrupt", "yes",
                "startingBatchId", " 3 ", "maxBytesPerTrigger", "1.5k", "commitLog", "/logs");
        equal(5L, given.maxRows(), "maxRowsPerTrigger");
        isTrue(given.skipCorrupt(), "skipCorrupt yes read as false");
        equal(3L, given.startingBatchId(), "startingBatchId");
        equal(1536L, given.maxBytes(), "maxBytesPerTrigger");
        equal("/logs", given.commitLog(), "commitLog");
        ReadOptions plain = parse("path", "/j");
        equal("/j", plain.path(), "path");
        equal(null, plain.maxRows(), "maxRowsPerTrigger absent");
        equal(null, plain.commitLog(), "commitLog absent");
        isTrue(!plain.skipCorrupt() && !plain.allowPartial() && plain.checksum(),
                "defaults: skipCorrupt and allowPartialRead off, checksum on");
    }

    public static void testJournalOptionsAreAcceptedAndChecksumIsRead() {
        ReadOptions options = parse("path", "/j", "checksum", "off", "fileSize", "10m",
                "checkpointLocation", "/c", "writer", "jvm");
        isTrue(!options.checksum(), "checksum off read as on");
    }

    public static void testValuesOutsideWhatAnOptionAcceptsAreRefusedNamingIt() {
        contains(raises(OptionException.class, () -> parse("path", "/j", "maxRowsPerTrigger", "0"))
                .getMessage(), "option maxRowsPerTrigger='0' is not valid", "from 1 up");
        contains(raises(OptionException.class, () -> parse("path", "/j", "skipCorrupt", "maybe"))
                .getMessage(), "option skipCorrupt='maybe' is not valid", "true or false");
        contains(raises(OptionException.class, () -> parse("path", "/j", "txnAppId", "a"))
                .getMessage(), "option txnAppId='a' is not valid", "write option");
        contains(raises(OptionException.class, () -> parse("maxRowsPerTrigger", "5"))
                .getMessage(), "needs a path");
    }

    public static void testStartingTimestampTakesIso8601OrMilliseconds() {
        equal(1_500_000L, parse("path", "/j", "startingTimestamp", "1500").startingTimeMicros(),
                "1500 ms");
        equal(3_600_000_000L + 250_000L, parse("path", "/j", "startingTimestamp",
                "1970-01-01T02:00:00.25+01:00").startingTimeMicros(), "with an offset");
        equal(2_000_000L, parse("path", "/j", "startingTimestamp", "1970-01-01 00:00:02")
                .startingTimeMicros(), "naive, read as UTC");
        contains(raises(OptionException.class, () -> parse("path", "/j", "startingTimestamp",
                "yesterday")).getMessage(), "option startingTimestamp='yesterday' is not valid");
    }

    public static void testMissingHostWaitIsATimeOf5sByDefault() {
        equal(5_000L, parse("path", "/j").missingHostWaitMs(), "default");
        equal(500L, parse("path", "/j", "missingHostWait", "500ms").missingHostWaitMs(), "500ms");
        equal(90_000L, parse("path", "/j", "MISSINGHOSTWAIT", "90s").missingHostWaitMs(), "any case");
        contains(raises(OptionException.class, () -> parse("path", "/j", "missingHostWait", "soon"))
                .getMessage(), "option missingHostWait='soon' is not valid", "a time such as");
    }

    /** The options of alternating names and values, as Spark hands them to a read. */
    private static ReadOptions parse(String... pairs) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            options.put(pairs[i], pairs[i + 1]);
        }
        return ReadOptions.parse(new CaseInsensitiveStringMap(options));
    }
}
