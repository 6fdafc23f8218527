package io.sparkjournal.fuzz;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.events.CommitLog;
import io.sparkjournal.events.CommittedLane;
import io.sparkjournal.events.LogView;
import io.sparkjournal.journal.LaneSnapshot;
import io.sparkjournal.journal.LiveRecord;
import io.sparkjournal.journal.PreparedTx;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.LogManager;
import java.util.zip.CRC32C;

/**
 * The JVM side of the fuzz targets jvm_lane, jvm_log and jvm_page (tests/fuzz/fuzz_jvm_*.py):
 * one long-lived process that reads one case a line from stdin and answers one
 * JSON line a case, so a mutation loop pays the JVM's start once. Not an API.
 *
 * <pre>JvmFuzz [SECONDS]      (the time limit of one case, default 10)
 * lane TAB folder TAB recover(0|1) TAB checksum(0|1)   -> LaneSnapshot.read, every body read
 * log TAB folder                                      -> CommitLog.view, committed lanes, commit times
 * page TAB body file TAB lane folder                  -> PageRef.decode, PageBatches' rows ({@link JvmFuzzPage};
 *                                                       needs Spark's jars on the classpath)</pre>
 *
 * Answer: {@code {"kind": "ok", "digest": [...]}} (what was read, as strings
 * the Python side builds the same way: order does not matter);
 * {@code {"kind": "refused", "error": class}} for an IOException - the
 * project's own (every documented reader error extends IOException) or the
 * file system's, {@code "own"} saying which; {@code {"kind": "finding",
 * "error": class, "trace": ...}} for any other Throwable (a RuntimeException,
 * OutOfMemoryError under the -Xmx the harness sets, StackOverflowError) or a
 * case over the time limit ({@code "error": "timeout"}; the process exits
 * after it, as its worker thread cannot be stopped). A large body that does
 * not read is a digest item {@code "<id>:body-refused"}, not a refusal of the
 * lane: Python's snapshot reads bodies lazily too.
 */
public final class JvmFuzz {

    private static final ObjectMapper JSON = new ObjectMapper();

    private JvmFuzz() {
    }

    public static void main(String[] args) throws Exception {
        long limitSeconds = args.length > 0 ? Long.parseLong(args[0]) : 10;
        LogManager.getLogManager().reset();     // the readers' warnings on damaged files: noise here
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        ExecutorService worker = Executors.newSingleThreadExecutor(run -> {
            Thread thread = new Thread(run, "fuzz-case");
            thread.setDaemon(true);
            return thread;
        });
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] fields = line.split("\t", -1);
            Future<List<String>> reading = worker.submit(() -> read(fields));
            ObjectNode answer = JSON.createObjectNode();
            boolean stop = false;
            try {
                List<String> digest = reading.get(limitSeconds, TimeUnit.SECONDS);
                ArrayNode items = answer.put("kind", "ok").putArray("digest");
                digest.forEach(items::add);
            } catch (TimeoutException late) {
                answer.put("kind", "finding").put("error", "timeout")
                        .put("trace", "over " + limitSeconds + " s: " + line);
                stop = true;
            } catch (ExecutionException failed) {
                classify(failed.getCause(), answer);
            }
            out.println(JSON.writeValueAsString(answer));
            if (stop) {
                System.exit(3);
            }
        }
        System.exit(0);
    }

    static void classify(Throwable thrown, ObjectNode answer) {
        Throwable cause = thrown instanceof UncheckedIOException && thrown.getCause() != null
                ? thrown.getCause() : thrown;
        if (cause instanceof IOException) {
            answer.put("kind", "refused").put("error", cause.getClass().getSimpleName())
                    .put("own", cause.getClass().getName().startsWith("io.sparkjournal."))
                    .put("message", String.valueOf(cause.getMessage()));
            return;
        }
        StringWriter trace = new StringWriter();
        cause.printStackTrace(new PrintWriter(trace));
        String text = trace.toString();
        answer.put("kind", "finding").put("error", cause.getClass().getName())
                .put("trace", text.length() > 4000 ? text.substring(0, 4000) : text);
    }

    static List<String> read(String[] fields) throws IOException {
        switch (fields[0]) {
            case "lane":
                return lane(fields[1], "1".equals(fields[2]), "1".equals(fields[3]));
            case "log":
                return log(fields[1]);
            case "page":
                return JvmFuzzPage.page(fields[1], fields[2]);
            default:
                throw new IllegalArgumentException("unknown case kind " + fields[0]);
        }
    }

    /** Every live record (id, user type, length, the body's size and CRC) and every prepared transaction. */
    static List<String> lane(String folder, boolean recover, boolean checksum) throws IOException {
        List<String> digest = new ArrayList<>();
        try (LaneSnapshot snapshot = LaneSnapshot.read(Paths.get(folder), checksum, recover)) {
            for (LiveRecord record : snapshot.records()) {
                digest.add(record(record));
            }
            for (PreparedTx tx : snapshot.prepared()) {
                StringBuilder item = new StringBuilder("prepared:").append(Long.toUnsignedString(tx.txId()));
                for (LiveRecord record : tx.records()) {
                    item.append(' ').append(record(record));
                }
                digest.add(item.toString());
            }
        }
        return digest;
    }

    private static String record(LiveRecord record) {
        String head = Long.toUnsignedString(record.recordId()) + ":" + record.userType() + ":" + record.bodyLength();
        ByteBuffer body;
        try {
            body = record.body();
        } catch (IOException refused) {
            return head + ":body-refused";
        }
        CRC32C crc = new CRC32C();
        int size = body.remaining();
        crc.update(body.duplicate());
        return head + ":" + size + ":" + crc.getValue();
    }

    /** The last committed batch of every query, its commit time, and every committed lane. */
    static List<String> log(String folder) throws IOException {
        List<String> digest = new ArrayList<>();
        CommitLog log = new CommitLog(folder);
        LogView view = log.view();
        Set<String> queries = new TreeSet<>(view.checkpoint().queries().keySet());
        queries.addAll(view.entries().keySet());
        for (String query : queries) {
            long last = view.lastCommitted(query);
            Long at = last >= 0 ? view.committedAtMs(query, last) : null;
            digest.add("last:" + query + "=" + last + "@" + at);
        }
        for (CommittedLane lane : CommittedLane.of(view).values()) {
            digest.add("lane:" + lane.node() + "|" + lane.lane() + "|" + lane.host() + "|" + lane.root()
                    + "|" + lane.batches() + "|" + lane.nodeBatches());
        }
        return digest;
    }
}
