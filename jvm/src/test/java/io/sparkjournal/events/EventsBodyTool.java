package io.sparkjournal.events;

import io.sparkjournal.journal.StrictJson;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.spark.SparkArrowSchema;
import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * A command for tests/test_jvm_events_body_agreement.py only: writes what the
 * JVM lane writer's body layer makes of Arrow batches, for Python to read back.
 * Not an API. One JSON line (ASCII) per batch or schema on stdout.
 *
 * <pre>
 * EventsBodyTool bodies IN OUT QUERY FIRST_ID [MAX_BODY]
 *     each batch k of the IPC stream file IN: OUT/k.body (EventsBodyWriter,
 *     batch id FIRST_ID + k) and {"rows", "nbytes", "stats"}; with MAX_BODY (a
 *     comma-separated list) also "pieces": {maxBody: {"rows_per_piece", "pieces":
 *     [[start, rows, bytes]]}}, each piece's body in OUT/k-maxBody-j.body
 * EventsBodyTool refill IN OUT QUERY FIRST_ID SPARK_SCHEMA_JSON TIMEZONE
 *     each batch k as Spark rows (ArrowColumnVector) written by SparkArrowSchema.fill
 *     into a root of SparkArrowSchema.toArrow(schema): OUT/k.body
 * EventsBodyTool schema OUT TIMEZONE SPARK_SCHEMA_JSON_FILE...
 *     OUT/k.arrow: the IPC schema message of SparkArrowSchema.toArrow; {"json": its
 *     toJson(), "spark": the schema's json() as Spark hands it to PySpark}
 * </pre>
 *
 * Exit status 0, or 2 on a failure (its stack trace on stderr). Needs
 * {@code --add-opens=java.base/java.nio=ALL-UNNAMED} (Arrow's allocator).
 */
public final class EventsBodyTool {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private EventsBodyTool() {
    }

    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        try {
            switch (args[0]) {
                case "bodies" -> bodies(args, out);
                case "refill" -> refill(args, out);
                case "schema" -> schemas(args, out);
                default -> throw new IllegalArgumentException("unknown command " + args[0]);
            }
        } catch (Exception failed) {
            out.flush();
            failed.printStackTrace();
            System.exit(2);
        }
        out.flush();
    }

    private static void bodies(String[] args, PrintStream out) throws Exception {
        Path folder = Paths.get(args[2]);
        String query = args[3];
        long first = Long.parseLong(args[4]);
        String[] maxBodies = args.length > 5 ? args[5].split(",") : null;
        try (BufferAllocator allocator = new RootAllocator();
             InputStream in = new FileInputStream(args[1]);
             ArrowStreamReader reader = new ArrowStreamReader(in, allocator)) {
            VectorSchemaRoot root = reader.getVectorSchemaRoot();
            for (int k = 0; reader.loadNextBatch(); k++) {
                Files.write(folder.resolve(k + ".body"),
                        EventsBodyWriter.body(root, query, first + k));
                ObjectNode line = JSON.objectNode();
                line.put("rows", root.getRowCount());
                line.put("nbytes", ArrowBytes.of(root));
                line.set("stats", StrictJson.parse(EventsStats.json(root)));
                if (maxBodies != null) {
                    ObjectNode byBudget = line.putObject("pieces");
                    for (String budget : maxBodies) {
                        pieces(root, Long.parseLong(budget), folder, k, query, first + k,
                                byBudget.putObject(budget));
                    }
                }
                line(out, line);
            }
        }
    }

    /** The pieces of batch k under one maxBody: OUT/k-maxBody-j.body, [[start, rows, bytes]]. */
    private static void pieces(VectorSchemaRoot root, long maxBody, Path folder, int k,
                               String query, long batchId, ObjectNode into) throws IOException {
        int step = EventsBodyWriter.rowsPerPiece(root, maxBody);
        into.put("rows_per_piece", step);
        ArrayNode pieces = into.putArray("pieces");
        for (int start = 0, j = 0; step > 0 && start < root.getRowCount(); start += step, j++) {
            int rows = Math.min(step, root.getRowCount() - start);
            byte[] body = EventsBodyWriter.body(root, start, rows, query, batchId);
            Files.write(folder.resolve(k + "-" + maxBody + "-" + j + ".body"), body);
            pieces.add(JSON.arrayNode().add(start).add(rows).add(body.length));
        }
    }

    private static void refill(String[] args, PrintStream out) throws Exception {
        Path folder = Paths.get(args[2]);
        String query = args[3];
        long first = Long.parseLong(args[4]);
        StructType spark = (StructType) DataType.fromJson(Files.readString(Paths.get(args[5])));
        Schema arrow = SparkArrowSchema.toArrow(spark, args[6]);
        try (BufferAllocator allocator = new RootAllocator();
             InputStream in = new FileInputStream(args[1]);
             ArrowStreamReader reader = new ArrowStreamReader(in, allocator)) {
            VectorSchemaRoot source = reader.getVectorSchemaRoot();
            for (int k = 0; reader.loadNextBatch(); k++) {
                List<ColumnVector> columns = new ArrayList<>();
                for (FieldVector vector : source.getFieldVectors()) {
                    columns.add(new ArrowColumnVector(vector));
                }
                ColumnarBatch rows = new ColumnarBatch(columns.toArray(new ColumnVector[0]),
                        source.getRowCount());
                try (VectorSchemaRoot target = VectorSchemaRoot.create(arrow, allocator)) {
                    int written = SparkArrowSchema.fill(target, rows.rowIterator());
                    Files.write(folder.resolve(k + ".body"),
                            EventsBodyWriter.body(target, query, first + k));
                    line(out, JSON.objectNode().put("rows", written));
                }
            }
        }
    }

    private static void schemas(String[] args, PrintStream out) throws Exception {
        Path folder = Paths.get(args[1]);
        for (int k = 3; k < args.length; k++) {
            StructType spark = (StructType) DataType.fromJson(Files.readString(Paths.get(args[k])));
            Schema arrow = SparkArrowSchema.toArrow(spark, args[2]);
            try (FileChannel file = FileChannel.open(folder.resolve((k - 3) + ".arrow"),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                MessageSerializer.serialize(new WriteChannel(file), arrow, IpcOption.DEFAULT);
            }
            line(out, JSON.objectNode().put("json", arrow.toJson()).put("spark", spark.json()));
        }
    }

    private static void line(PrintStream out, JsonNode node) throws IOException {
        out.println(new com.fasterxml.jackson.databind.ObjectMapper().writer().with(JsonWriteFeature.ESCAPE_NON_ASCII)
                .writeValueAsString(node));
    }
}
