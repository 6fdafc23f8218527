package io.sparkjournal.spark;

import static io.sparkjournal.Expect.isTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.sparkjournal.events.Deletions;
import io.sparkjournal.events.PageRef;
import io.sparkjournal.journal.LaneSnapshot;
import io.sparkjournal.journal.LiveRecord;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
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
                List<JsonNode> rows = rows(lane, ref, columns(page.get("columns")),
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

    private static List<JsonNode> rows(Path lane, PageRef ref, StructType output, String host, String laneName)
            throws Exception {
        List<JsonNode> rows = new ArrayList<>();
        try (PageBatches page = PageBatches.open(lane, ref, output, new Deletions(), host, laneName,
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
