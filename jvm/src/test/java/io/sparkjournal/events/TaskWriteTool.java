package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;

/**
 * A command for tests/test_jvm_task_write.py: one {@link TaskWrite} driven by
 * JSON lines on stdin. Not an API.
 *
 * <p>The first line is the plan and the task's identity:
 * <pre>{"path": ..., "options": {...}, "log_uri": ..., "log_id": ... or null, "query": ...,
 *  "batch": n, "partition": n, "attempt": n, "task": n, "executor": optional}</pre>
 * ("executor" defaults to Python's executor_id rule); every later line names
 * one body, {@code {"body": "<file of an Arrow IPC stream>", "rows": n, "bytes": n}}
 * ("bytes" defaults to the file's size). Bodies are read as the write asks for
 * them, so a test can stop feeding lines and kill the process mid-transaction.
 *
 * <p>Prints the commit message as one JSON object (TaskMessage.to_json's
 * fields), or {@code {"message": null}} when the task writes nothing, and exits
 * 0; on an error prints {@code {"error": "<Class>: <message>"}} and exits 1.
 * Log lines go to stderr.
 */
public final class TaskWriteTool {

    private static final ObjectMapper JSON = new ObjectMapper();

    private TaskWriteTool() {
    }

    public static void main(String[] args) {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try {
            String first = in.readLine();
            if (first == null) {
                throw new IllegalArgumentException("no plan line on stdin");
            }
            JsonNode line = JSON.readTree(first);
            @SuppressWarnings("unchecked")
            Map<String, Object> options = JSON.convertValue(line.path("options"), Map.class);
            TaskWrite.Plan plan = new TaskWrite.Plan(line.get("path").asText(),
                    options == null ? Map.of() : options, line.get("log_uri").asText(),
                    line.path("log_id").isTextual() ? line.get("log_id").asText() : null,
                    line.get("query").asText(), line.get("batch").asLong());
            TaskWrite.Identity identity = new TaskWrite.Identity(line.path("partition").asLong(-1),
                    line.path("attempt").asLong(0), line.path("task").asLong(-1));
            String executor = line.path("executor").isTextual() ? line.get("executor").asText()
                    : RootLanes.executorId();
            Map<String, Object> message = TaskWrite.run(plan, identity, bodies(in), executor);
            System.out.println(message == null ? "{\"message\": null}"
                    : JSON.writeValueAsString(message));
            System.out.flush();
            System.exit(0);
        } catch (UncheckedIOException wrapped) {
            fail(wrapped.getCause());
        } catch (Exception error) {
            fail(error);
        }
    }

    private static void fail(Throwable error) {
        try {
            System.out.println(JSON.writeValueAsString(Map.of("error",
                    error.getClass().getSimpleName() + ": " + error.getMessage())));
        } catch (IOException unprintable) {
            System.out.println("{\"error\": \"unprintable\"}");
        }
        System.out.flush();
        System.exit(1);
    }

    /** The bodies named by the remaining lines, each read when asked for. */
    private static Iterator<TaskWrite.Body> bodies(BufferedReader in) {
        return new Iterator<>() {
            private String next;

            @Override
            public boolean hasNext() {
                try {
                    while (next == null) {
                        next = in.readLine();
                        if (next == null) {
                            return false;
                        }
                        next = next.isBlank() ? null : next;
                    }
                    return true;
                } catch (IOException error) {
                    throw new UncheckedIOException(error);
                }
            }

            @Override
            public TaskWrite.Body next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                try {
                    JsonNode line = JSON.readTree(next);
                    next = null;
                    byte[] body = Files.readAllBytes(Paths.get(line.get("body").asText()));
                    return new TaskWrite.Body(ByteBuffer.wrap(body), line.get("rows").asLong(),
                            line.path("bytes").asLong(body.length));
                } catch (IOException error) {
                    throw new UncheckedIOException(error);
                }
            }
        };
    }
}
