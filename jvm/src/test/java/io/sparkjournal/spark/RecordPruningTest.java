package io.sparkjournal.spark;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.events.LaneEvents;
import io.sparkjournal.journal.StrictJson;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Pruning and ranges give EVENTS.md's answers: a record is skipped only when
 * no value within its bounds can match (timestamps at every unit, date64,
 * floats), the host of a node id, record ids compared as u64, and reserved
 * column names refused before a write.
 */
public final class RecordPruningTest {

    private static final StructType SCHEMA = new StructType().add("t", DataTypes.TimestampType)
            .add("d", DataTypes.DateType).add("x", DataTypes.DoubleType);
    private static final long[] UNITS = {1L, 1_000L, 1_000_000L, 1_000_000_000L};

    private RecordPruningTest() {
    }

    private static List<Filter> filters(String column, Object value) {
        return List.of(new EqualTo(column, value), new LessThan(column, value), new LessThanOrEqual(column, value),
                new GreaterThan(column, value), new GreaterThanOrEqual(column, value));
    }

    /** Whether {@code v} (in a unit of {@code perSecond}) op {@code micros} holds, exactly. */
    private static boolean holds(Filter filter, long v, long perSecond, long micros) {
        int order = BigInteger.valueOf(v).multiply(BigInteger.valueOf(1_000_000L))
                .compareTo(BigInteger.valueOf(micros).multiply(BigInteger.valueOf(perSecond)));
        if (filter instanceof EqualTo) {
            return order == 0;
        } else if (filter instanceof LessThan) {
            return order < 0;
        } else if (filter instanceof LessThanOrEqual) {
            return order <= 0;
        } else if (filter instanceof GreaterThan) {
            return order > 0;
        }
        return order >= 0;
    }

    public static void testTimestampPruningKeepsEveryRecordThatCanMatchAtEveryUnit() {
        List<Long> literals = new ArrayList<>();
        for (long micros : new long[] {0, 1, 999, 1_000, 1_500, 999_999, 1_000_000, 1_500_000, 2_000_000,
                -1, -1_500_000, -1_000_000, -999_999}) {
            literals.add(micros);
        }
        int checked = 0;
        int pruned = 0;
        for (long perSecond : UNITS) {
            for (long micros : literals) {
                Instant instant = Instant.ofEpochSecond(Math.floorDiv(micros, 1_000_000L),
                        Math.floorMod(micros, 1_000_000L) * 1000L);
                long near = Math.floorDiv(micros * perSecond, 1_000_000L);
                for (Filter filter : filters("t", instant)) {
                    RecordFilter compare = RecordFilter.from(filter, SCHEMA);
                    for (long low = near - 2; low <= near + 2; low++) {
                        for (long high = low; high <= near + 2; high++) {
                            boolean any = false;
                            for (long v = low; v <= high; v++) {
                                any |= holds(filter, v, perSecond, micros);
                            }
                            boolean may = compare.mayMatchRange(low, high, perSecond);
                            isTrue(may || !any, filter + " at " + perSecond + "/s pruned [" + low + ", " + high
                                    + "], which holds a match");
                            boolean convertible = Math.floorMod(micros * perSecond, 1_000_000L) == 0;
                            boolean kept = filter instanceof EqualTo && !convertible;
                            isTrue(may == (any || kept), filter + " at " + perSecond + "/s: [" + low + ", "
                                    + high + "] not pruned exactly");
                            checked++;
                            pruned += may ? 0 : 1;
                        }
                    }
                }
            }
        }
        isTrue(checked > 1000 && pruned > 100, checked + " ranges checked, " + pruned + " pruned");
    }

    public static void testTheReviewedCaseOfAFilterBetweenTwoSeconds() {
        Instant oneAndAHalf = Instant.ofEpochSecond(1, 500_000_000);
        isTrue(RecordFilter.from(new LessThan("t", oneAndAHalf), SCHEMA).mayMatchRange(1L, 1L, 1L),
                "t < 1.5 s keeps a record whose min is 1 s");
        isTrue(RecordFilter.from(new LessThanOrEqual("t", oneAndAHalf), SCHEMA).mayMatchRange(1L, 1L, 1L),
                "t <= 1.5 s keeps it");
        isTrue(RecordFilter.from(new EqualTo("t", oneAndAHalf), SCHEMA).mayMatchRange(1L, 2L, 1L),
                "t = 1.5 s cannot be converted to seconds exactly: the record is kept");
        isTrue(RecordFilter.from(new GreaterThan("t", oneAndAHalf), SCHEMA).mayMatchRange(1L, 2L, 1L),
                "t > 1.5 s keeps a record whose max is 2 s");
        isTrue(!RecordFilter.from(new GreaterThanOrEqual("t", oneAndAHalf), SCHEMA).mayMatchRange(0L, 1L, 1L),
                "t >= 1.5 s skips a record of 0..1 s");
        Instant far = Instant.ofEpochSecond(9_000_000_000_000L);
        isTrue(RecordFilter.from(new LessThan("t", far), SCHEMA).mayMatchRange(0L, 0L, 1_000_000_000L),
                "a literal nanoseconds cannot hold keeps the record");
    }

    public static void testDate64BoundsCompareInDays() {
        Map<String, Long> units = new HashMap<>();
        JsonNode json = StrictJson.parse("{\"d\": [86400000, 86400000]}".getBytes(StandardCharsets.UTF_8));
        Field d64 = new Field("d", new FieldType(true, new ArrowType.Date(DateUnit.MILLISECOND), null), null);
        Object[] bounds = LaneEvents.statistics(json, new Schema(List.of(d64)).getFields(), units).get("d");
        LocalDate dayOne = LocalDate.ofEpochDay(1);
        isTrue(RecordFilter.from(new EqualTo("d", dayOne), SCHEMA).mayMatchRange(bounds[0], bounds[1], 1_000_000L),
                "d = day 1 keeps a record of day 1 stored in milliseconds");
        isTrue(!RecordFilter.from(new GreaterThan("d", dayOne), SCHEMA)
                .mayMatchRange(bounds[0], bounds[1], 1_000_000L), "d > day 1 skips it");
        isTrue(!RecordFilter.from(new LessThan("d", dayOne), SCHEMA)
                .mayMatchRange(bounds[0], bounds[1], 1_000_000L), "d < day 1 skips it");
    }

    public static void testFloatBoundsCompareExactlyAndNeverPruneNaN() {
        isTrue(RecordFilter.from(new EqualTo("x", -0.0), SCHEMA).mayMatchRange(0.0, 0.0, 1_000_000L),
                "-0.0 equals 0.0");
        isTrue(RecordFilter.from(new EqualTo("x", Double.NaN), SCHEMA).mayMatchRange(1.0, 2.0, 1_000_000L),
                "NaN rows are not in the bounds");
        isTrue(RecordFilter.from(new GreaterThan("x", 5.0), SCHEMA).mayMatchRange(1.0, 2.0, 1_000_000L),
                "NaN, above every number in Spark, may match x > 5");
        isTrue(!RecordFilter.from(new LessThan("x", 1.0), SCHEMA).mayMatchRange(1.0, 2.0, 1_000_000L),
                "x < 1 skips [1, 2]");
        isTrue(!RecordFilter.from(new EqualTo("x", 0.1), SCHEMA).mayMatchRange(0.2, 0.3, 1_000_000L),
                "x = 0.1 skips [0.2, 0.3]");
    }

    public static void testTheHostOfANodeIdIsAfterItsLastAtOrTheWholeId() {
        equal("host", LanePartition.hostOf("0123@host"), "after @");
        equal("c", LanePartition.hostOf("a@b@c"), "after the last @");
        equal("0123abc", LanePartition.hostOf("0123abc"), "no @: the whole id");
        equal(null, LanePartition.hostOf("0123@"), "an empty host: none");
        equal(null, LanePartition.hostOf(null), "no node id: none");
        equal("plain", new LanePartition("/r/lane-000", "plain", new String[0]).host(), "a partition's host");
    }

    public static void testRecordIdRangesCompareAsU64() {
        long top = -1L;                                      // 2^64 - 1
        long half = Long.MIN_VALUE;                          // 2^63
        LanePartition whole = new LanePartition("/r/lane-000", "n@h", new String[0]);
        isTrue(whole.inRange(0) && whole.inRange(Long.MAX_VALUE) && whole.inRange(half) && whole.inRange(top - 1),
                "a whole lane holds ids above 2^63");
        LanePartition upper = whole.range(half, half + 10);
        isTrue(upper.inRange(half) && upper.inRange(half + 9) && !upper.inRange(half + 10) && !upper.inRange(5),
                "a range above 2^63");
        isTrue(!PageBatches.cuts(half, half + 5, half, half + 10), "a page inside a range above 2^63");
        isTrue(PageBatches.cuts(5, half + 5, half, half + 10), "a page reaching below");
        isTrue(PageBatches.cuts(half, top - 1, 0, half + 1), "a page reaching above");
        isTrue(!PageBatches.cuts(0, top - 1, 0, LanePartition.WHOLE_LANE), "a whole lane cuts no page");
    }

    public static void testEventColumnsMustNotTakeTheJournalsOwnNames() {
        for (String name : new String[] {"_batch_id", "_commit_time", "_host", "_lane", "_record_id", "_row",
                "__sj_row"}) {
            Field taken = new Field(name, new FieldType(true, new ArrowType.Int(64, true), null), null);
            Field id = new Field("id", new FieldType(true, new ArrowType.Int(64, true), null), null);
            String first = raises(SchemaEvolution.SchemaMismatchException.class,
                    () -> SchemaEvolution.evolve(null, new Schema(List.of(id, taken)), "a write into /j"))
                    .getMessage();
            contains(first, "a write into /j: column(s) " + name + " take names reserved", "nothing of this batch");
            raises(SchemaEvolution.SchemaMismatchException.class,
                    () -> SchemaEvolution.evolve(new Schema(List.of(id)), new Schema(List.of(id, taken)), "w"));
        }
        SchemaEvolution.refuseReserved(List.of("id", "_Host", "row", "batch_id"), "w");
    }
}
