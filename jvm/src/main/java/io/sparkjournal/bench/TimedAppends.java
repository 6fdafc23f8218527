package io.sparkjournal.bench;

import io.sparkjournal.journal.AppendConfig;
import io.sparkjournal.journal.CanonicalJson;
import io.sparkjournal.journal.JournalException;
import io.sparkjournal.journal.LaneAppender;
import io.sparkjournal.journal.LaneWriterLock;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The JVM appender's timed loop for {@code sparkjournal bench journal}
 * (sparkjournal/tools/bench/jvm_append.py starts it): one JVM that times
 * rounds of durable appends on command, so that its start and the JIT's
 * warm-up stay outside every clock. Not an API: a benchmark's child process.
 *
 * <pre>java -cp JAR io.sparkjournal.bench.TimedAppends</pre>
 *
 * <p>Reads one command per line from stdin, four fields separated by tabs:
 * <pre>LANE	BODY_FILE	COUNT	FILE_SIZE</pre>
 * For each one it reads the body (all of BODY_FILE's bytes), takes the writer
 * lock of LANE (an empty or missing folder, a new lane) and opens a
 * {@link LaneAppender} there with the declared defaults and fileSize
 * FILE_SIZE, which creates the lane's first data file zero-filled at that size
 * (as every writer's open does); then, inside the clock and nothing else,
 * appends COUNT ADD records of that body with record ids 1..COUNT, each with
 * {@code sync} true (so each returns durable: one write and one fdatasync per
 * record, the body written alone when it is larger than the write buffer);
 * then closes the appender and releases the lock, outside the clock. The
 * caller sizes FILE_SIZE so that no file is rolled or created inside the loop,
 * and removes the lane afterwards.
 *
 * <p>After each command it prints one line and flushes stdout:
 * {@code {"seconds": S}}, the loop's wall time by {@link System#nanoTime};
 * on a failure {@code {"error": "<Class>: <message>"}}, then exits 1. The end
 * of stdin exits 0; a malformed command is a failure.
 */
public final class TimedAppends {

    private static final int FIELDS = 4;

    private TimedAppends() {
    }

    public static void main(String[] args) {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in,
                StandardCharsets.UTF_8));
        try {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                double seconds = run(line);
                out.println("{\"seconds\": " + seconds + "}");
                out.flush();
            }
        } catch (Exception | OutOfMemoryError failed) {
            out.println(CanonicalJson.text(java.util.Map.of("error",
                    failed.getClass().getSimpleName() + ": " + failed.getMessage())));
            out.flush();
            System.exit(1);
        }
        out.flush();
        System.exit(0);
    }

    /** One command (see the class): the seconds its COUNT appends took. */
    static double run(String command) throws IOException {
        String[] fields = command.split("\t", -1);
        if (fields.length != FIELDS) {
            throw new IllegalArgumentException("a command is LANE, BODY_FILE, COUNT and FILE_SIZE"
                    + " separated by tabs, not: " + command);
        }
        Path lane = Paths.get(fields[0]);
        ByteBuffer body = ByteBuffer.wrap(Files.readAllBytes(Paths.get(fields[1])));
        long count = Long.parseLong(fields[2]);
        AppendConfig defaults = AppendConfig.defaults();
        AppendConfig config = new AppendConfig(Long.parseLong(fields[3]), defaults.bufferSize(),
                defaults.blockSize(), defaults.maxIO(), defaults.userVersion());
        Files.createDirectories(lane);
        LaneWriterLock lock = LaneWriterLock.tryAcquire(lane);
        if (lock == null) {
            throw new JournalException("lane " + lane + " has a writer already");
        }
        try (lock; LaneAppender appender = LaneAppender.open(lane, config)) {
            return appendLoop(appender, body, count);
        }
    }

    /** Seconds to append {@code count} synced ADD records of {@code body}, ids from 1. The
     *  appender copies the body on each call and never moves its position. */
    private static double appendLoop(LaneAppender appender, ByteBuffer body, long count)
            throws IOException {
        long started = System.nanoTime();
        for (long recordId = 1; recordId <= count; recordId++) {
            appender.appendAdd(recordId, 0, body, true);
        }
        return (System.nanoTime() - started) / 1e9;
    }
}
