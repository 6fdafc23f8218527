package io.sparkjournal.spark;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkjournal.events.ArrowBytes;
import io.sparkjournal.events.BodyBuffer;
import io.sparkjournal.events.EventsBodyWriter;
import io.sparkjournal.events.TaskWrite;
import io.sparkjournal.events.TaskWriteOptions;
import io.sparkjournal.format.Layout;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.arrow.ArrowWriter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.ArrowUtils;

/**
 * One micro-batch of the foreachBatch sink written by JVM tasks, with no Python
 * worker (the Python sink run with {@code writer="jvm"} calls it): phase one
 * of the two-phase commit, the same as the Python sink's own tasks
 * ({@code df.mapInArrow(arrow_task(plan))}) write it; the decision stays with
 * the sink's Python driver (COMMIT_LOG.md).
 *
 * <p>Contract of {@link #run}: on the driver it parses the plan (JSON:
 * {@code path}, {@code options} - the journal options RESOLVED, every field of
 * {@code load_config}'s JournalConfig -, {@code log_uri}, {@code log_id} (the
 * driver's LOG_ID, or null), {@code query}, {@code batch}, {@code timezone}) and
 * checks the options with {@link TaskWriteOptions#of} and the schema with
 * {@link SparkArrowSchema#toArrow} BEFORE any job, so a refused option or
 * column type fails the batch there, naming it (IllegalArgumentException).
 * Then it runs one Spark job over the batch's rows
 * ({@code queryExecution().toRdd()}, no new plan): each task converts its rows
 * to Arrow in chunks of {@code spark.sql.execution.arrow.maxRecordsPerBatch}
 * rows (one reused {@link VectorSchemaRoot}, Spark's {@link ArrowWriter}), cuts
 * each chunk into pieces by the cut of EVENTS.md, "Pieces" (informative:
 * {@link EventsBodyWriter#rowsPerPiece} against max_body), encodes each piece's body
 * ({@link EventsBodyWriter}) and hands the bodies to {@link TaskWrite#run}
 * one at a time, so rows are converted while earlier bodies are appended and a
 * partition is never held whole. It returns the messages of the tasks that
 * wrote (the JSON of {@code TaskMessage.to_json}), in partition order.
 *
 * <p>Memory: each task works in a child allocator of Spark's Arrow root
 * allocator, closed with the root at the task's end, whether it succeeds or
 * fails. Fault injection for tests, as {@code lane_writer.INJECT_FAILURE}: the
 * local property {@code sparkjournal.inject.fail} = "afterWrite:P" fails the
 * first attempt of partition P after its bodies were appended and before its
 * PREPARE (TaskWrite rolls the transaction back), "afterPrepare:P" after its
 * PREPARE is durable (the decision leaves it out).
 *
 * <p>Crash behaviour: that of {@link TaskWrite}; nothing here is durable.
 */
public final class JvmSinkWrite {

    /** lane_writer.INJECT_FAILURE. */
    public static final String INJECT_FAILURE = "sparkjournal.inject.fail";
    private static final ObjectMapper JSON = new ObjectMapper();

    private JvmSinkWrite() {
    }

    /**
     * Writes the rows of {@code df} as the batch {@code planJson} names (see the
     * class); the task messages as JSON, one per task that wrote.
     */
    public static String[] run(Dataset<Row> df, String planJson) throws IOException {
        org.apache.spark.sql.classic.Dataset<Row> dataset =
                (org.apache.spark.sql.classic.Dataset<Row>) df;
        ConnectorBuild.requireSparkMajor();
        ConnectorBuild.requireOnExecutors(dataset.sparkSession().sparkContext(),
                "JournalSink(writer='jvm')");
        int chunkRows = dataset.sparkSession().sessionState().conf().arrowMaxRecordsPerBatch();
        TaskPlan plan = parse(planJson, dataset.schema(), chunkRows);
        List<String> messages = dataset.queryExecution().toRdd().toJavaRDD()
                .mapPartitions(new Task(plan)).collect();
        return messages.toArray(new String[0]);
    }

    /**
     * Why this JVM writer would refuse to write {@code df} under the RESOLVED
     * journal options {@code optionsJson} (a journal option it does not enforce,
     * a column type it cannot convert), or null where it would write it: the
     * checks {@link #run} makes before any job, for the sink's writer="auto".
     */
    public static String refusal(Dataset<Row> df, String optionsJson, String timezone)
            throws IOException {
        HashMap<String, Object> options = JSON.readValue(optionsJson,
                new TypeReference<HashMap<String, Object>>() { });
        try {
            check(options, df.schema(), timezone);
        } catch (IllegalArgumentException refused) {
            return refused.getMessage();
        }
        return null;
    }

    /** The plan of {@code planJson} for rows of {@code schema}, checked (see the class). */
    static TaskPlan parse(String planJson, StructType schema, int chunkRows) throws IOException {
        JsonNode node = JSON.readTree(planJson);
        HashMap<String, Object> options = JSON.convertValue(node.get("options"),
                new TypeReference<HashMap<String, Object>>() { });
        String timezone = text(node, "timezone");
        check(options, schema, timezone);                     // refused here: before any job
        return TaskPlan.of(text(node, "path"), options, text(node, "log_uri"), text(node, "log_id"),
                text(node, "query"), node.get("batch").asLong(), timezone, chunkRows, schema);
    }

    /** Refuses (IllegalArgumentException, naming it) a journal option the JVM writer does
     *  not enforce and a column type it cannot convert. */
    private static void check(Map<String, Object> options, StructType schema, String timezone) {
        TaskWriteOptions.of(options);
        SparkArrowSchema.toArrow(schema, timezone);
    }

    private static String text(JsonNode node, String key) {
        JsonNode value = node.get(key);
        return value == null || value.isNull() ? null : value.asText();
    }

    /** One task: its rows in, its message (zero or one JSON string) out. */
    static final class Task implements FlatMapFunction<java.util.Iterator<InternalRow>, String> {
        private static final long serialVersionUID = 1L;
        private final TaskPlan plan;

        Task(TaskPlan plan) {
            this.plan = plan;
        }

        @Override
        public Iterator<String> call(Iterator<InternalRow> rows) throws Exception {
            TaskContext context = TaskContext.get();
            TaskWrite.Identity identity = new TaskWrite.Identity(context.partitionId(),
                    context.attemptNumber(), context.taskAttemptId());
            String inject = context.getLocalProperty(INJECT_FAILURE);
            Map<String, Object> message;
            try (ArrowPieces pieces = new ArrowPieces(plan, context.taskAttemptId())) {
                message = TaskWrite.run(plan.taskPlan(), identity,
                        new Bodies(pieces, rows, identity, inject), SparkEnv.get().executorId());
            }
            if (message == null) {
                return Collections.emptyIterator();
            }
            String injected = injected(inject, identity, "afterPrepare");
            if (injected != null) {
                throw new TaskWrite.SinkTaskException(injected, null);
            }
            return Collections.singletonList(JSON.writeValueAsString(message)).iterator();
        }
    }

    /** lane_writer._maybe_fail: the failure's message when the first attempt of the
     *  partition named is to fail at {@code point}, else null. */
    static String injected(String inject, TaskWrite.Identity identity, String point) {
        if (inject != null && identity.attempt() == 0
                && inject.equals(point + ":" + identity.partition())) {
            return "injected failure " + inject + " (first attempt of partition "
                    + identity.partition() + ")";
        }
        return null;
    }

    /** A failure injected where a task's bodies are asked for (TaskWrite rolls back). */
    static final class InjectedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedFailure(String message) {
            super(message);
        }
    }

    /**
     * The task's bodies, made as they are asked for: a chunk of rows is
     * converted when the last piece of the one before was handed out
     * ({@link ArrowPieces}).
     */
    static final class Bodies implements Iterator<TaskWrite.Body> {
        private final ArrowPieces pieces;
        private final Iterator<InternalRow> rows;
        private final TaskWrite.Identity identity;
        private final String inject;
        private TaskWrite.Body next;

        Bodies(ArrowPieces pieces, Iterator<InternalRow> rows, TaskWrite.Identity identity,
               String inject) {
            this.pieces = pieces;
            this.rows = rows;
            this.identity = identity;
            this.inject = inject;
        }

        @Override
        public boolean hasNext() {
            while (next == null) {
                next = pieces.next();
                if (next != null) {
                    break;
                }
                if (!rows.hasNext()) {
                    String injected = pieces.handedOut() > 0
                            ? injected(inject, identity, "afterWrite") : null;
                    if (injected != null) {
                        throw new InjectedFailure(injected);         // all appended, no PREPARE
                    }
                    return false;
                }
                while (rows.hasNext() && !pieces.add(rows.next())) {
                    // the chunk fills
                }
                pieces.seal();
            }
            return true;
        }

        @Override
        public TaskWrite.Body next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            TaskWrite.Body body = next;
            next = null;
            return body;
        }
    }
}
