package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.TempFolder;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.AppendConfig;
import io.sparkjournal.journal.PathOutsideException;
import io.sparkjournal.journal.StrictJson;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * The events layer's readers give EVENTS.md's answers: NODE_ID (stripping,
 * UTF-8), a lane that is a symbolic link (outside), PAGE record versions,
 * the fields of page and drop-page requests, and which statistics a reader
 * may use.
 */
public final class SpecReadersTest {

    private SpecReadersTest() {
    }

    public static void testANodeIdLosesOnlyAsciiWhitespaceAroundIt() throws Exception {
        equal("0a@host", NodeIds.parse(" \t\r\n0a@host \r\n\t".getBytes(StandardCharsets.UTF_8), "f"),
                "space, tab, CR and LF are stripped");
        equal("\u00a00a@host\u2003", NodeIds.parse("\u00a00a@host\u2003\n".getBytes(StandardCharsets.UTF_8), "f"),
                "Unicode spaces are part of the id");
        equal("a\u000bb\u000c", NodeIds.parse("a\u000bb\u000c".getBytes(StandardCharsets.UTF_8), "f"),
                "vertical tab and form feed are not ASCII whitespace of the spec");
        equal(null, NodeIds.parse(" \n\t\r".getBytes(StandardCharsets.UTF_8), "f"), "only whitespace: no id");
        equal(null, NodeIds.parse(new byte[0], "f"), "empty: no id");
    }

    public static void testANodeIdThatIsNotUtf8IsDamagedNamingTheFile() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path root = temp.path();
            equal(null, NodeIds.read(root), "no NODE_ID: no id");
            Files.write(root.resolve("NODE_ID"), new byte[] {'a', (byte) 0xff, '@', 'h', '\n'});
            NodeIdException damaged = raises(NodeIdException.class, () -> NodeIds.read(root));
            contains(damaged.getMessage(), root.resolve("NODE_ID").toString(), "damaged", "not UTF-8");
            isTrue(damaged instanceof EventsException, "one of the events layer's kinds");
            Files.write(root.resolve("NODE_ID"), "\u00e9a@h\n".getBytes(StandardCharsets.UTF_8));
            equal("\u00e9a@h", NodeIds.read(root), "UTF-8 text");
        }
    }

    public static void testALaneThatIsASymbolicLinkIsOutside() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path root = Files.createDirectory(temp.path().resolve("root"));
            Path elsewhere = Files.createDirectory(temp.path().resolve("elsewhere"));
            Files.createSymbolicLink(root.resolve("lane-000"), elsewhere);
            PathOutsideException outside = raises(PathOutsideException.class,
                    () -> RootLanes.openWriter(root, "n@h", AppendConfig.defaults(), lane -> false));
            contains(outside.getMessage(), "lane-000", "symbolic link");
            equal(0L, Files.list(elsewhere).count(), "nothing written where the link points");
        }
    }

    /** A PAGE record body of {@code version} naming page-1.parquet with record ids {@code ids}. */
    private static ByteBuffer page(int version, long... ids) {
        byte[] name = "page-1.parquet".getBytes(StandardCharsets.US_ASCII);
        ByteBuffer body = ByteBuffer.allocate(PageRef.HEAD_SIZE + name.length + 8 * ids.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        body.put(PageRef.MAGIC).put((byte) version).put((byte) 0).putShort((short) name.length)
                .putLong(100).putInt(7).putInt(ids.length).putLong(3)
                .putLong(ids[0]).putLong(ids[ids.length - 1])
                .putLong(-1).putLong(-1).putLong(-1).putLong(-1).put(name);
        for (long id : ids) {
            body.putLong(id);
        }
        return body.flip();
    }

    public static void testAPageRecordOfANewerVersionIsNewerFormat() throws Exception {
        equal("page-1.parquet", PageRef.decode(page(1, 4, 9)).name(), "version 1 decodes");
        for (int version : new int[] {2, 255}) {
            FormatVersionException newer = raises(FormatVersionException.class,
                    () -> PageRef.decode(page(version, 4, 9), "record 5 of lane /x/lane-000"));
            contains(newer.getMessage(), "PAGE record record 5 of lane /x/lane-000", "newer");
        }
        ByteBuffer shortNewer = ByteBuffer.wrap(new byte[] {'S', 'J', 'P', 'G', 2});
        raises(FormatVersionException.class, () -> PageRef.decode(shortNewer));
        raises(PageRecordException.class, () -> PageRef.decode(page(0, 4, 9)));
        ByteBuffer otherMagic = page(2, 4, 9);
        otherMagic.put(0, (byte) 'X');
        raises(PageRecordException.class, () -> PageRef.decode(otherMagic));
    }

    private static void request(Path lane, String name, String json) throws Exception {
        Files.createDirectories(lane.resolve("requests"));
        Files.writeString(lane.resolve("requests").resolve(name), json);
    }

    private static final String PAGE = "{\"name\": \"page-00000000000000000001-0a1b2c3d.parquet\", "
            + "\"size\": 18446744073709551615, \"crc32c\": 4294967295, \"rows\": 3, "
            + "\"record_ids\": [1, 9223372036854775808, 18446744073709551615], "
            + "\"batch_range\": [-1, -1], \"time_range\": [-9223372036854775808, 9223372036854775807]}";

    public static void testPageAndDropPageRequestsAreCheckedAsStated() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane-000");
            request(lane, "1.json", "{\"format\": 1, \"kind\": \"page\", \"page\": " + PAGE + "}");
            request(lane, "2.json", "{\"format\": 1, \"kind\": \"drop-page\", \"page\": \"page-1.parquet\"}");
            request(lane, "3.json", "{\"format\": 1, \"kind\": \"later\", \"page\": 5}");
            List<LaneRequests.Request> found = LaneRequests.pending(lane);
            equal(List.of("page", "drop-page", "later"), found.stream().map(LaneRequests.Request::kind).toList(),
                    "well-formed requests and an unknown kind are pending");
            isTrue(DeleteRequests.pendingDeletions(lane).isEmpty(), "and delete nothing");
        }
        String[] badPages = {
            "5", "null", "{}",
            PAGE.replace("\"name\": \"page-00000000000000000001-0a1b2c3d.parquet\"", "\"name\": \"../x.parquet\""),
            PAGE.replace("\"name\": \"page-00000000000000000001-0a1b2c3d.parquet\"", "\"name\": 5"),
            PAGE.replace("18446744073709551615, \"crc32c\"", "18446744073709551616, \"crc32c\""),
            PAGE.replace("\"size\": 18446744073709551615, ", ""),
            PAGE.replace("4294967295", "4294967296"),
            PAGE.replace("\"rows\": 3", "\"rows\": -3"),
            PAGE.replace("\"rows\": 3", "\"rows\": 3.0"),
            PAGE.replace("[1, 9223372036854775808, 18446744073709551615]", "[]"),
            PAGE.replace("[1, 9223372036854775808, 18446744073709551615]", "[9223372036854775808, 1]"),
            PAGE.replace("[1, 9223372036854775808, 18446744073709551615]", "[1, 1]"),
            PAGE.replace("[1, 9223372036854775808, 18446744073709551615]", "[1, \"2\"]"),
            PAGE.replace("\"batch_range\": [-1, -1]", "\"batch_range\": [-1]"),
            PAGE.replace("\"batch_range\": [-1, -1]", "\"batch_range\": [-1, 9223372036854775808]"),
            PAGE.replace(", \"time_range\": [-9223372036854775808, 9223372036854775807]", ""),
        };
        int index = 0;
        for (String bad : badPages) {
            try (TempFolder temp = new TempFolder()) {
                Path lane = temp.path().resolve("lane-000");
                request(lane, "1.json", "{\"format\": 1, \"kind\": \"page\", \"page\": " + bad + "}");
                contains(raises(RequestException.class, () -> LaneRequests.pending(lane)).getMessage(),
                        "damaged");
                index++;
            }
        }
        equal(badPages.length, index, "every malformed page request refused");
        for (String bad : new String[] {"5", "null", "\"data.parquet\"", "\"page-A.parquet\"", "{}"}) {
            try (TempFolder temp = new TempFolder()) {
                Path lane = temp.path().resolve("lane-000");
                request(lane, "1.json", "{\"format\": 1, \"kind\": \"drop-page\", \"page\": " + bad + "}");
                raises(RequestException.class, () -> LaneRequests.pending(lane));
            }
        }
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane-000");
            request(lane, "1.json", "{\"format\": 2, \"kind\": \"page\", \"page\": 5}");
            raises(FormatVersionException.class, () -> LaneRequests.pending(lane));
        }
    }

    private static Field field(String name, ArrowType type) {
        return new Field(name, new FieldType(true, type, null), null);
    }

    private static Map<String, Object[]> stats(String json, Map<String, Long> units, Field... fields) {
        JsonNode found = StrictJson.parse(json.getBytes(StandardCharsets.UTF_8));
        return LaneEvents.statistics(found, List.of(fields), units);
    }

    public static void testStatisticsAreUsedOnlyWhereTheyAreExact() {
        Map<String, Long> units = new HashMap<>();
        Field int64 = field("i", new ArrowType.Int(64, true));
        Field uint64 = field("u", new ArrowType.Int(64, false));
        Field day = field("d32", new ArrowType.Date(DateUnit.DAY));
        Field millis = field("d64", new ArrowType.Date(DateUnit.MILLISECOND));
        Field seconds = field("ts", new ArrowType.Timestamp(TimeUnit.SECOND, "UTC"));
        Field real = field("f", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE));
        Field text = field("s", ArrowType.Utf8.INSTANCE);
        Field flag = field("b", ArrowType.Bool.INSTANCE);
        Map<String, Object[]> found = stats("{\"i\": [-5, 9223372036854775807], "
                + "\"u\": [0, 18446744073709551615], \"d32\": [-1, 3], \"d64\": [86400000, 172800001], "
                + "\"ts\": [1, 2], \"f\": [1, 2.5], \"s\": [\"a\", \"b\"], \"b\": [false, true], "
                + "\"gone\": [1, 2]}", units, int64, uint64, day, millis, seconds, real, text, flag);
        equal(List.of(-5L, Long.MAX_VALUE), List.of(found.get("i")), "int64 bounds");
        isTrue(!found.containsKey("u"), "a bound above 2^63 - 1 is ignored, never wrapped");
        equal(List.of(-1L, 3L), List.of(found.get("d32")), "date32 in days");
        equal(List.of(1L, 3L), List.of(found.get("d64")), "date64 milliseconds as the days that hold them");
        equal(List.of(1L, 2L), List.of(found.get("ts")), "timestamps in their unit");
        equal(1L, units.get("ts"), "seconds");
        equal(List.of(1.0, 2.5), List.of(found.get("f")), "floats as doubles");
        equal(List.of("a", "b"), List.of(found.get("s")), "strings");
        isTrue(!found.containsKey("b") && !found.containsKey("gone"), "no entry for other types or columns");
        found = stats("{\"d64\": [-1, -86400000], \"i\": [1.5, 2], \"s\": [1, 2], \"ts\": [1], "
                + "\"f\": [\"a\", 1], \"d32\": [1, 18446744073709551615]}",
                new HashMap<>(), millis, int64, text, seconds, real, day);
        equal(List.of(-1L, -1L), List.of(found.get("d64")), "negative milliseconds floor and ceil");
        equal(1, found.size(), "entries of another representation are ignored");
    }
}
