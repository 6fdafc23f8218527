package io.sparkjournal.spark;

import static io.sparkjournal.Expect.isTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.sparkjournal.GoldenCorpus;
import io.sparkjournal.TempFolder;
import io.sparkjournal.events.DeleteRequests;
import io.sparkjournal.events.Deletions;
import io.sparkjournal.events.EventsBody;
import io.sparkjournal.events.PageRecordException;
import io.sparkjournal.events.PageRef;
import io.sparkjournal.journal.LaneSnapshot;
import io.sparkjournal.journal.LiveRecord;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The JVM's page reader ({@link PageBatches}, Spark's Parquet reader) gives
 * the rows the golden lane corpus states for the page file of its events case
 * (tests/golden/lanes/pages; generate.py, pages_case.py): every row of the
 * page a live PAGE record names, in file order, as the canonical JSON whose
 * SHA-256 expected.json holds ({@code _commit_time} as microseconds;
 * {@code _host} and {@code _lane} restated from the read, here the page's
 * own), and its first rows. The corpus folder is the system property
 * {@code sparkjournal.golden.lanes}; the lane is read in place, read only.
 *
 * <p>And for every case stating {@code events} (pages-deleted,
 * page-record-damaged, page-wrong-size): the lane's deleted rows (its live
 * deletion vectors and pending delete requests, {@link DeleteRequests}) are
 * the stated ones, and the visible rows (the page's through
 * {@link PageBatches} with those deletions, each live EVENTS record's less its
 * deleted positions) are the stated rows; a PAGE record that does not decode
 * is a {@link PageRecordException}, a page file of another size a
 * {@link PageFileException} naming it (EVENTS.md, error kinds). Those lanes
 * are copied first (a snapshot takes the file-set lock).
 */
public final class PageGoldenTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long PAGE = 3;

    private PageGoldenTest() {
    }

    public static void testThePageOfTheEventsCaseReadsAsItsStatedRows() throws Exception {
        String where = System.getProperty("sparkjournal.golden.lanes");
        isTrue(where != null, "-Dsparkjournal.golden.lanes=<checkout>/tests/golden/lanes is not set");
        Path lane = Paths.get(where, "pages", "lane");
        JsonNode stated = JSON.readTree(Files.readAllBytes(lane.resolveSibling("expected.json"))).get("pages");
        isTrue(stated != null && stated.size() > 0, "the events case states no page");
        int read = 0;
        try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
            for (LiveRecord record : snapshot.records()) {
                if (record.userType() != PAGE) {
                    continue;
                }
                PageRef ref = PageRef.decode(record.body());
                JsonNode page = stated.get(read++);
                isTrue(page.get("name").asText().equals(ref.name()), "page " + ref.name() + " vs " + page);
                JsonNode first = page.get("first_rows").get(0);
                List<JsonNode> rows = rows(lane, ref, columns(page.get("columns")), new Deletions(),
                        first.get(4).asText(), first.get(5).asText());
                byte[] canonical = JSON.writeValueAsBytes(rows);
                JsonNode parsed = JSON.readTree(canonical);        // numbers as a parse types them
                String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical));
                isTrue(rows.size() == page.get("rows").asLong(), ref.name() + ": " + rows.size() + " rows");
                for (int i = 0; i < page.get("first_rows").size(); i++) {
                    isTrue(page.get("first_rows").get(i).equals(parsed.get(i)),
                            ref.name() + " row " + i + ": " + parsed.get(i) + " vs " + page.get("first_rows").get(i));
                }
                isTrue(sha.equals(page.get("rows_sha256").asText()), ref.name() + ": rows differ (sha " + sha + ")");
            }
        }
        isTrue(read == stated.size(), read + " live pages, " + stated.size() + " stated");
    }

    private static final List<String> VISIBLE = List.of("id", "payload", "_batch_id", "_record_id", "_row");
    /** The events columns of the corpus's journal (generate.py), which page footers are checked against. */
    static final List<String> EVENTS = List.of("id", "payload");

    public static void testTheEventsCasesDeletionsVisibleRowsAndDamagedPagesReadAsStated() throws Exception {
        Path corpus = GoldenCorpus.folder("sparkjournal.golden.lanes", "tests/golden/lanes");
        List<String> wrong = new ArrayList<>();
        int cases = 0;
        for (String each : GoldenCorpus.cases(corpus, path -> Files.isRegularFile(path.resolve("expected.json")))) {
            Path folder = corpus.resolve(each);
            JsonNode stated = JSON.readTree(Files.readAllBytes(folder.resolve("expected.json"))).get("events");
            if (stated == null) {
                continue;
            }
            cases++;
            String name = folder.getFileName().toString();
            try (TempFolder temp = new TempFolder()) {
                Path lane = TempFolder.copyTree(folder.resolve("lane"), temp.path().resolve("lane"));
                String failure = null;
                JsonNode error = stated.path("error");
                try {
                    checkEvents(name, lane, stated, wrong);
                } catch (PageRecordException damaged) {
                    failure = "PAGE record";
                } catch (PageFileException damaged) {
                    failure = "page file";
                    if (error.has("file") && !damaged.getMessage().contains(error.get("file").asText())) {
                        wrong.add(name + ": " + damaged.getMessage() + " does not name " + error.get("file"));
                    }
                } catch (Exception other) {
                    wrong.add(name + ": " + other + ", expected " + stated.path("outcome").asText()
                            + " " + error);
                    continue;
                }
                String want = "ok".equals(stated.get("outcome").asText()) ? null : error.get("what").asText();
                if (want == null ? failure != null : !want.equals(failure)) {
                    wrong.add(name + ": read failed on " + failure + ", expected " + (want == null ? "ok" : want));
                }
            }
        }
        isTrue(cases > 0, "no golden lane states its events");
        isTrue(wrong.isEmpty(), "events differ from expected.json:\n" + String.join("\n", wrong));
    }

    private static void checkEvents(String name, Path lane, JsonNode stated, List<String> wrong) throws Exception {
        Deletions deletions = DeleteRequests.pendingDeletions(lane);           // before the snapshot
        List<JsonNode> rows = new ArrayList<>();
        try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
            Deletions vectors = new Deletions();
            List<PageRef> pages = new ArrayList<>();
            for (LiveRecord record : snapshot.records()) {
                if (record.userType() == 2) {
                    vectors.addVector(record.body(), "record " + record.recordId());
                } else if (record.userType() == PAGE) {
                    pages.add(PageRef.decode(record.body()));
                }
            }
            deletions.merge(vectors);
            for (PageRef ref : pages) {
                rows.addAll(rows(lane, ref, columns(JSON.valueToTree(VISIBLE)), deletions, "host", "lane"));
            }
            for (LiveRecord record : snapshot.records()) {
                if (record.userType() == 1) {
                    rows.addAll(recordRows(record, deletions));
                }
            }
        }
        if (!"ok".equals(stated.get("outcome").asText())) {
            wrong.add(name + ": read, expected " + stated.get("error"));
            return;
        }
        var deleted = JSON.createObjectNode();
        deletions.recordIds().stream().sorted().forEach(id -> {
            if (deletions.whole(id)) {
                deleted.putNull(Long.toString(id));
            } else {
                ArrayNode positions = deleted.putArray(Long.toString(id));
                Arrays.stream(deletions.rowsOf(id)).sorted().forEach(positions::add);
            }
        });
        if (!JSON.readTree(JSON.writeValueAsBytes(deleted)).equals(stated.get("deleted"))) {   // parsed number types
            wrong.add(name + ": deleted " + deleted + ", expected " + stated.get("deleted"));
        }
        rows.sort(Comparator.comparingLong((JsonNode row) -> row.get(3).asLong())
                .thenComparingLong(row -> row.get(4).asLong()));
        byte[] canonical = JSON.writeValueAsBytes(rows);
        JsonNode parsed = JSON.readTree(canonical);
        String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(canonical));
        if (rows.size() != stated.get("rows").asLong()) {
            wrong.add(name + ": " + rows.size() + " visible rows, expected " + stated.get("rows"));
        }
        for (int i = 0; i < stated.get("first_rows").size(); i++) {
            if (!stated.get("first_rows").get(i).equals(parsed.get(i))) {
                wrong.add(name + ": row " + i + " " + parsed.get(i) + ", expected " + stated.get("first_rows").get(i));
            }
        }
        if (!sha.equals(stated.get("rows_sha256").asText())) {
            wrong.add(name + ": visible rows differ (sha " + sha + ")");
        }
    }

    /** An EVENTS record's rows (id, payload, _batch_id, _record_id, _row), less its deleted positions. */
    private static List<JsonNode> recordRows(LiveRecord record, Deletions deletions) throws Exception {
        ByteBuffer body = record.body();
        byte[] raw = new byte[body.remaining()];
        body.duplicate().get(raw);
        Long batchId = EventsBody.split(ByteBuffer.wrap(raw)).batchId();
        List<JsonNode> rows = new ArrayList<>();
        try (RootAllocator allocator = new RootAllocator();
             ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(raw), allocator)) {
            isTrue(reader.loadNextBatch(), "record " + record.recordId() + " holds no batch");
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            BigIntVector ids = (BigIntVector) root.getVector("id");
            VarCharVector payloads = (VarCharVector) root.getVector("payload");
            for (int r = 0; r < root.getRowCount(); r++) {
                if (deletions.isDeleted(record.recordId(), r)) {
                    continue;
                }
                ArrayNode row = JSON.createArrayNode();
                row.add(ids.get(r)).add(new String(payloads.get(r), StandardCharsets.UTF_8));
                if (batchId == null) {
                    row.addNull();
                } else {
                    row.add(batchId);
                }
                row.add(record.recordId()).add(r);
                rows.add(row);
            }
        }
        return rows;
    }


    /** The page's columns as the read asks for them (the events table's types). */
    private static StructType columns(JsonNode names) {
        List<StructField> fields = new ArrayList<>();
        for (JsonNode name : names) {
            DataType type = switch (name.asText()) {
                case "id", "_batch_id", "_record_id" -> DataTypes.LongType;
                case "_commit_time" -> DataTypes.TimestampType;
                case "_row" -> DataTypes.IntegerType;
                default -> DataTypes.StringType;
            };
            fields.add(DataTypes.createStructField(name.asText(), type, true));
        }
        return DataTypes.createStructType(fields);
    }

    private static List<JsonNode> rows(Path lane, PageRef ref, StructType output, Deletions deletions, String host,
                                       String laneName) throws Exception {
        List<JsonNode> rows = new ArrayList<>();
        try (PageBatches page = PageBatches.open(lane, ref, output, EVENTS, deletions, host, laneName,
                0, Long.MAX_VALUE)) {
            while (page.next()) {
                ColumnarBatch batch = page.batch();
                for (int r = 0; r < batch.numRows(); r++) {
                    ArrayNode row = JSON.createArrayNode();
                    for (int c = 0; c < output.fields().length; c++) {
                        ColumnVector column = batch.column(c);
                        DataType type = output.fields()[c].dataType();
                        if (column.isNullAt(r)) {
                            row.addNull();
                        } else if (type == DataTypes.StringType) {
                            row.add(column.getUTF8String(r).toString());
                        } else if (type == DataTypes.IntegerType) {
                            row.add(column.getInt(r));
                        } else {
                            row.add(column.getLong(r));
                        }
                    }
                    rows.add(row);
                }
            }
        }
        return rows;
    }
}
