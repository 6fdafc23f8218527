package io.sparkjournal.events;

import io.sparkjournal.journal.LaneWriterLock;
import java.util.concurrent.TimeUnit;

/**
 * The JVM's commit-log maintenance, driven from Python's tests
 * (tests/test_jvm_log_checkpoint.py):
 *
 * <pre>
 *   checkpoint LOG NOW_MS                         LogCheckpointWriter.checkpoint; prints the file made or "none"
 *   maintain LOG RETAIN_BATCHES RETAIN_NS NOW_MS  LogMaintenance.maintain; prints its line
 *   hold LOG                                      takes the checkpoint lock, prints "held" (or "refused"),
 *                                                 keeps it until stdin ends
 * </pre>
 */
public final class LogMaintenanceTool {

    private LogMaintenanceTool() {
    }

    public static void main(String[] args) throws Exception {
        CommitLog log = new CommitLog(args[1]);
        switch (args[0]) {
            case "checkpoint" -> {
                String made = LogCheckpointWriter.checkpoint(log, Long.parseLong(args[2]), null).name();
                System.out.println(made == null ? "none" : made);
            }
            case "maintain" -> System.out.println(LogMaintenance.maintain(log, Long.parseLong(args[2]),
                    Long.parseLong(args[3]), TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[4]))).line());
            case "hold" -> {
                try (LaneWriterLock held = LogMaintenance.lock(log)) {
                    System.out.println(held == null ? "refused" : "held");
                    System.out.flush();
                    while (System.in.read() >= 0) {
                        // held until stdin ends
                    }
                }
            }
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }
}
