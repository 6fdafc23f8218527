package io.sparkjournal.journal;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A command for tests/test_jvm_writer_lock.py (and for looking at a lane by
 * hand): takes or probes a lane's writer lock as a JVM writer does. Not an
 * API. Each line it prints is one JSON object, flushed at once.
 *
 * <pre>LaneWriterLockTool LANE | --twice LANE | --probe LANE | --probe-table TABLE LANE</pre>
 *
 * <ul>
 *   <li>{@code LANE}: {@link LaneWriterLock#tryAcquire}; prints {@code {"held": true}}
 *       or {@code {"held": false}}; held, keeps it until stdin ends.</li>
 *   <li>{@code --twice LANE}: two holds in this JVM; prints {@code {"first": .., "second": ..}}
 *       and, while the first is held, waits for stdin to end; then closes it, takes the
 *       lock once more and prints {@code {"again": ..}}.</li>
 *   <li>{@code --probe LANE}: prints {@code {"alive": ..}}, {@link WriterProbe#writerAlive}.</li>
 *   <li>{@code --probe-table TABLE LANE}: the same, the kernel's lock table read from the
 *       file {@code TABLE} instead of {@code /proc/locks}.</li>
 * </ul>
 *
 * Exit 0; on an I/O error {@code {"error": class, "message": ...}} and exit 2;
 * bad arguments exit 1.
 */
public final class LaneWriterLockTool {

    private LaneWriterLockTool() {
    }

    public static void main(String[] args) {
        String mode = args.length >= 2 ? args[0] : args.length == 1 ? "" : null;
        boolean known = mode != null && (args.length == 3 ? mode.equals("--probe-table")
                : mode.isEmpty() || mode.equals("--twice") || mode.equals("--probe"));
        if (!known || args.length > 3 || args[args.length - 1].startsWith("--")) {
            System.err.println("usage: LaneWriterLockTool LANE | --twice LANE | --probe LANE"
                    + " | --probe-table TABLE LANE");
            System.exit(1);
            return;
        }
        Path lane = Paths.get(args[args.length - 1]);
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        try {
            if (mode.equals("--probe")) {
                line(out, "{\"alive\": " + WriterProbe.writerAlive(lane) + "}");
            } else if (mode.equals("--probe-table")) {
                boolean alive = WriterProbe.held(lane.resolve(WriterProbe.LOCK_FILE),
                        Paths.get(args[1]));
                line(out, "{\"alive\": " + alive + "}");
            } else if (mode.equals("--twice")) {
                twice(lane, out);
            } else {
                try (LaneWriterLock lock = LaneWriterLock.tryAcquire(lane)) {
                    line(out, "{\"held\": " + (lock != null) + "}");
                    if (lock != null) {
                        System.in.readAllBytes();
                    }
                }
            }
        } catch (IOException | RuntimeException failed) {
            line(out, "{\"error\": \"" + failed.getClass().getSimpleName() + "\", \"message\": \""
                    + escaped(String.valueOf(failed.getMessage())) + "\"}");
            System.exit(2);
        }
        System.exit(0);
    }

    private static void twice(Path lane, PrintStream out) throws IOException {
        try (LaneWriterLock first = LaneWriterLock.tryAcquire(lane);
             LaneWriterLock second = LaneWriterLock.tryAcquire(lane)) {
            line(out, "{\"first\": " + (first != null) + ", \"second\": " + (second != null) + "}");
            System.in.readAllBytes();
        }
        try (LaneWriterLock again = LaneWriterLock.tryAcquire(lane)) {
            line(out, "{\"again\": " + (again != null) + "}");
        }
    }

    private static void line(PrintStream out, String json) {
        out.println(json);
        out.flush();
    }

    /** {@code text} as the inside of a JSON string, ASCII only. */
    static String escaped(String text) {
        StringBuilder escaped = new StringBuilder();
        for (char c : text.toCharArray()) {
            if (c == '"' || c == '\\') {
                escaped.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7e) {
                escaped.append(String.format("\\u%04x", (int) c));
            } else {
                escaped.append(c);
            }
        }
        return escaped.toString();
    }
}
