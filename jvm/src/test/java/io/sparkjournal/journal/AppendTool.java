package io.sparkjournal.journal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HexFormat;
import java.util.Map;

/**
 * A command for tests/test_jvm_append_agreement.py (and for writing a lane by
 * hand): a {@link LaneAppender} driven by JSON lines on stdin. Not an API.
 *
 * <pre>AppendTool LANE OPTIONS_JSON</pre>
 *
 * {@code OPTIONS_JSON} is an object of {@link AppendConfig#fromOptions}
 * options, e.g. {@code {"fileSize": 32768, "bufferSize": 8192}}. The tool
 * takes the lane's writer lock ({@link LaneWriterLock}), opens the lane and
 * prints {@code {"op": "open", "rolled_back_tx_ids": [...], "prepared_tx_ids":
 * [...], "torn_tail": null or {...}, "file_id": n}} (what the load found, and the
 * file appends go to); then reads one command per line:
 *
 * <pre>
 * {"op":"add","id":7,"type":3,"body":"&lt;hex&gt;","sync":true}
 * {"op":"add_tx","tx":2,"id":8,"type":1,"body":"&lt;hex&gt;"}
 * {"op":"prepare","tx":2,"xid":"&lt;hex&gt;","sync":true}
 * {"op":"commit","tx":2,"sync":false}      {"op":"rollback","tx":2,"sync":true}
 * {"op":"next_id"}  {"op":"next_tx"}  {"op":"sync"}  {"op":"close"}
 * </pre>
 *
 * ("type" defaults to 0, "sync" to false, "body" and "xid" to empty.) After
 * each command has completed it prints one line, {@code {"op": ..., "n": its
 * line number from 1}} (with {@code "id"} for next_id/next_tx and
 * {@code "file_id"}, the file being appended to), and flushes stdout: the
 * ack of a synced command means its record, and all before it, is durable.
 * {@code close}, or the end of stdin, closes the appender (writing and
 * syncing everything) and exits 0. On any error it prints {@code {"error":
 * "<Class>: <message>"}} and exits 1 (bad arguments exit 2).
 */
public final class AppendTool {

    private static final ObjectMapper JSON = new ObjectMapper();

    private AppendTool() {
    }

    public static void main(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: AppendTool LANE OPTIONS_JSON (commands as JSON lines on stdin)");
            System.exit(2);
            return;
        }
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        try {
            run(Paths.get(args[0]), args[1], out);
        } catch (Exception failed) {
            ObjectNode error = JSON.createObjectNode();
            error.put("error", failed.getClass().getSimpleName() + ": " + failed.getMessage());
            out.println(error.toString());
            out.flush();
            System.exit(1);
        }
        out.flush();
        System.exit(0);
    }

    @SuppressWarnings("unchecked")
    private static void run(Path lane, String optionsJson, PrintStream out) throws IOException {
        AppendConfig config = AppendConfig.fromOptions(JSON.readValue(optionsJson, Map.class));
        Files.createDirectories(lane);
        LaneWriterLock lock = LaneWriterLock.tryAcquire(lane);
        if (lock == null) {
            throw new JournalException("lane " + lane + " has a writer already (another process"
                    + " holds " + lane.resolve(LaneWriterLock.NAME) + "); one process writes a lane"
                    + " at a time");
        }
        try (lock; LaneAppender appender = LaneAppender.open(lane, config)) {
            out.println(opened(appender).toString());
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                    StandardCharsets.UTF_8));
            long n = 0;
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                n++;
                JsonNode command = JSON.readTree(line);
                ObjectNode ack = JSON.createObjectNode();
                String op = command.path("op").asText();
                ack.put("op", op).put("n", n);
                boolean last = perform(appender, op, command, ack);
                ack.put("file_id", unsigned(appender.currentFileId()));
                out.println(ack.toString());
                out.flush();
                if (last) {
                    break;
                }
            }
        }
    }

    /** Carries out one command; true for {@code close}. */
    private static boolean perform(LaneAppender appender, String op, JsonNode c, ObjectNode ack)
            throws IOException {
        boolean sync = c.path("sync").asBoolean(false);
        switch (op) {
            case "add":
                appender.appendAdd(id(c, "id"), c.path("type").asInt(0), hex(c, "body"), sync);
                return false;
            case "add_tx":
                appender.appendAddTx(id(c, "tx"), id(c, "id"), c.path("type").asInt(0), hex(c, "body"));
                return false;
            case "prepare":
                ByteBuffer xid = hex(c, "xid");
                byte[] bytes = new byte[xid.remaining()];
                xid.get(bytes);
                appender.prepare(id(c, "tx"), bytes, sync);
                return false;
            case "commit":
                appender.commit(id(c, "tx"), sync);
                return false;
            case "rollback":
                appender.rollback(id(c, "tx"), sync);
                return false;
            case "next_id":
                ack.put("id", unsigned(appender.nextRecordId()));
                return false;
            case "next_tx":
                ack.put("id", unsigned(appender.nextTxId()));
                return false;
            case "sync":
                appender.sync();
                return false;
            case "close":
                appender.close();
                return true;
            default:
                throw new IllegalArgumentException("unknown op " + c.path("op") + " in " + c);
        }
    }

    private static ObjectNode opened(LaneAppender appender) {
        ObjectNode line = JSON.createObjectNode();
        line.put("op", "open");
        ArrayNode rolledBack = line.putArray("rolled_back_tx_ids");
        appender.rolledBackTxIds().forEach(id -> rolledBack.add(unsigned(id)));
        LoadReport report = appender.loadReport();
        ArrayNode prepared = line.putArray("prepared_tx_ids");
        report.preparedTxIds().forEach(id -> prepared.add(unsigned(id)));
        LoadReport.TornTail torn = report.tornTail();
        if (torn == null) {
            line.putNull("torn_tail");
        } else {
            line.putObject("torn_tail").put("file", torn.file()).put("offset", torn.offset())
                    .put("records_dropped", torn.recordsDropped())
                    .put("bytes_dropped", torn.bytesDropped());
        }
        line.put("file_id", unsigned(appender.currentFileId()));
        return line;
    }

    /** A u64 field: a JSON number up to 2^64 - 1, kept as its bit pattern. */
    private static long id(JsonNode command, String field) {
        JsonNode value = command.get(field);
        if (value == null || !value.isIntegralNumber()) {
            throw new IllegalArgumentException("field " + field + " must be a whole number in "
                    + command);
        }
        return value.bigIntegerValue().longValue();
    }

    private static ByteBuffer hex(JsonNode command, String field) {
        return ByteBuffer.wrap(HexFormat.of().parseHex(command.path(field).asText("")));
    }

    private static BigInteger unsigned(long value) {
        return new BigInteger(Long.toUnsignedString(value));
    }
}
