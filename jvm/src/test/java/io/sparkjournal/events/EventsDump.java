package io.sparkjournal.events;

import io.sparkjournal.journal.StrictJson;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A command for tests/test_jvm_events_agreement.py only: prints what the
 * events layer's decoders make of files, as JSON, one line per input, so that
 * Python can compare it with its own decoding. Not an API.
 *
 * <pre>
 * EventsDump decision FILE...        Decision.fromJson of each file (where = the file as given)
 * EventsDump outcomes CASES          Resolver outcome per line of CASES:
 *                                    {"xid": hex, "node", "lane", "tx"}
 * EventsDump log BASE...             queries, their batch ids, LOG_ID of each commit log
 * EventsDump schema BASE...          the schema.arrow of each commit log (null if none)
 * EventsDump lanes BASE...           CommittedLane.of each commit log's view: node, host,
 *                                    root, lane, batches and node_batches (counts)
 * EventsDump body FILE...            EventsBody.split of each file (one EVENTS body), batch loaded
 * EventsDump vector FILE...          DeletionVector.decode of each file (where = the file)
 * EventsDump deletions FILE...       one line: the union (Deletions) of every file's vector
 * EventsDump page FILE...            PageRef.decode of each file
 * EventsDump requests LANE...        LaneRequests.pending and DeleteRequests.pendingDeletions
 * </pre>
 *
 * A line that fails is {"error": the Java exception's simple name, "message":
 * its message}. Exit status 0, or 2 if any line (or the arguments) failed.
 * Output is ASCII (JSON escapes). The body command needs
 * {@code --add-opens=java.base/java.nio=ALL-UNNAMED} (Arrow's allocator).
 */
public final class EventsDump {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private EventsDump() {
    }

    private interface Command {
        JsonNode run(String arg) throws Exception;
    }

    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        int errors = 0;
        if (args.length < 2) {
            line(out, error(new IllegalArgumentException("usage: EventsDump COMMAND ARG...")));
            out.flush();
            System.exit(2);
        }
        List<String> rest = Arrays.asList(args).subList(1, args.length);
        List<JsonNode> lines = new ArrayList<>();
        switch (args[0]) {
            case "decision" -> each(rest, lines, file -> decision(file));
            case "outcomes" -> lines.addAll(outcomes(rest.get(0)));
            case "log" -> each(rest, lines, EventsDump::log);
            case "schema" -> each(rest, lines, base -> {
                Schema schema = new CommitLog(base).readSchema();
                return schema == null ? JSON.nullNode() : DumpArrow.schema(schema, null);
            });
            case "lanes" -> each(rest, lines, EventsDump::lanes);
            case "body" -> each(rest, lines, file -> DumpArrow.body(EventsBody.split(read(file))));
            case "vector" -> each(rest, lines,
                    file -> vector(DeletionVector.decode(read(file), file)));
            case "deletions" -> lines.add(attempt(() -> {
                Deletions union = new Deletions();
                for (String file : rest) {
                    union.addVector(read(file), file);
                }
                return deletions(union);
            }));
            case "page" -> each(rest, lines, file -> page(PageRef.decode(read(file))));
            case "requests" -> each(rest, lines, EventsDump::requests);
            default -> lines.add(error(new IllegalArgumentException("unknown command " + args[0])));
        }
        for (JsonNode node : lines) {
            errors += node.has("error") ? 1 : 0;
            line(out, node);
        }
        out.flush();
        System.exit(errors == 0 ? 0 : 2);
    }

    private interface Body {
        JsonNode run() throws Exception;
    }

    private static void each(List<String> args, List<JsonNode> lines, Command command) {
        for (String arg : args) {
            lines.add(attempt(() -> command.run(arg)));
        }
    }

    private static JsonNode attempt(Body body) {
        try {
            return body.run();
        } catch (Exception failed) {
            return error(failed);
        }
    }

    private static ObjectNode error(Exception failed) {
        ObjectNode node = JSON.objectNode();
        node.put("error", failed.getClass().getSimpleName());
        node.put("message", String.valueOf(failed.getMessage()));
        return node;
    }

    private static void line(PrintStream out, JsonNode node) throws IOException {
        out.println(new com.fasterxml.jackson.databind.ObjectMapper().writer()
                .with(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII)
                .writeValueAsString(node));
    }

    static ByteBuffer read(String file) throws IOException {
        return ByteBuffer.wrap(Files.readAllBytes(Paths.get(file)));
    }

    static JsonNode u64(long value) {
        return JSON.numberNode(new java.math.BigInteger(Long.toUnsignedString(value)));
    }

    private static ArrayNode longs(long[] values, boolean unsigned) {
        ArrayNode array = JSON.arrayNode();
        for (long value : values) {
            array.add(unsigned ? u64(value) : JSON.numberNode(value));
        }
        return array;
    }

    private static JsonNode decision(String file) throws Exception {
        Decision decision = Decision.fromJson(Files.readAllBytes(Paths.get(file)), file);
        ObjectNode node = JSON.objectNode();
        node.put("query", decision.query());
        node.put("batch", decision.batch());
        node.put("committed_at_ms", decision.committedAtMs());
        node.set("txs", JSON.arrayNode().addAll(decision.txs()));
        ArrayNode refs = node.putArray("tx_refs");
        for (TxRef ref : decision.txRefs()) {
            refs.add(JSON.arrayNode().add(ref.node()).add(ref.lane()).add(u64(ref.tx())));
        }
        node.put("rows", decision.rows());
        return node;
    }

    private static List<JsonNode> outcomes(String cases) throws IOException {
        List<JsonNode> lines = new ArrayList<>();
        Resolver resolver = new Resolver();
        for (String text : Files.readAllLines(Paths.get(cases))) {
            lines.add(attempt(() -> {
                JsonNode spec = StrictJson.parse(text.getBytes(StandardCharsets.UTF_8));
                TxRef ref = new TxRef(spec.get("node").textValue(), spec.get("lane").textValue(),
                        spec.get("tx").bigIntegerValue().longValue());
                byte[] xid = HexFormat.of().parseHex(spec.get("xid").textValue());
                return JSON.objectNode().put("outcome", resolver.outcome(xid, ref).value());
            }));
        }
        return lines;
    }

    private static JsonNode log(String base) throws Exception {
        CommitLog log = new CommitLog(base);
        ObjectNode node = JSON.objectNode();
        ArrayNode queries = node.putArray("queries");
        ObjectNode batches = node.putObject("batches");
        for (String query : log.queries()) {
            queries.add(query);
            batches.set(query, longs(log.batches(query), false));
        }
        node.put("log_id", log.logId());
        return node;
    }

    private static JsonNode lanes(String base) throws Exception {
        ArrayNode out = JSON.arrayNode();
        for (CommittedLane lane : CommittedLane.of(new CommitLog(base).view()).values()) {
            out.addObject().put("node", lane.node()).put("host", lane.host()).put("root", lane.root())
                    .put("lane", lane.lane()).put("batches", lane.batches())
                    .put("node_batches", lane.nodeBatches());
        }
        return out;
    }

    private static JsonNode vector(DeletionVector vector) {
        ObjectNode node = JSON.objectNode();
        node.set("target", u64(vector.target()));
        node.set("positions", vector.all() ? JSON.nullNode() : longs(vector.positions(), false));
        return node;
    }

    private static JsonNode deletions(Deletions deletions) {
        ObjectNode rows = JSON.objectNode();
        for (long id : deletions.recordIds()) {
            long[] positions = deletions.rowsOf(id);
            rows.set(Long.toUnsignedString(id), positions == null ? JSON.nullNode()
                    : longs(positions, false));
        }
        return rows;
    }

    private static JsonNode page(PageRef ref) {
        ObjectNode node = JSON.objectNode();
        node.put("name", ref.name());
        node.set("size", u64(ref.size()));
        node.put("crc32c", ref.crc32c());
        node.set("rows", u64(ref.rows()));
        node.set("record_ids", longs(ref.recordIds(), true));
        node.set("batch_range", longs(ref.batchRange(), false));
        node.set("time_range", longs(ref.timeRange(), false));
        return node;
    }

    private static JsonNode requests(String lane) throws Exception {
        ObjectNode node = JSON.objectNode();
        ArrayNode pending = node.putArray("pending");
        for (LaneRequests.Request request : LaneRequests.pending(Paths.get(lane))) {
            pending.addObject().put("path", request.path().toString())
                    .set("request", request.body());
        }
        node.set("deletions", deletions(DeleteRequests.pendingDeletions(Paths.get(lane))));
        return node;
    }

    static ObjectNode metadataHex(Map<String, byte[]> metadata) {
        ObjectNode node = JSON.objectNode();
        for (Map.Entry<String, byte[]> entry : metadata.entrySet()) {
            node.put(HexFormat.of().formatHex(entry.getKey().getBytes(StandardCharsets.UTF_8)),
                    HexFormat.of().formatHex(entry.getValue()));
        }
        return node;
    }
}
