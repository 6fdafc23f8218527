package io.sparkjournal.spark;

import org.apache.spark.SparkContext;

/**
 * When planning stops waiting for a host holding committed lanes to have a
 * live executor: the read option
 * {@code missingHostWait} from now, or, while the application is young,
 * Spark's registration wait ({@code spark.scheduler.maxRegisteredResourcesWaitingTime},
 * 30s by default) from the application's start - whichever ends later. So a
 * read planned as the application starts waits for executors still
 * registering, and a read long after waits only missingHostWait for a host
 * that is gone. A forgotten node is never waited for (its lanes are not
 * required: {@link CommittedLanes}).
 */
final class PlacementWait {

    static final String REGISTERING = "spark.scheduler.maxRegisteredResourcesWaitingTime";

    private PlacementWait() {
    }

    /** The deadline, ms since the epoch, of a wait starting at {@code nowMs} (see the class). */
    static long deadlineMs(long nowMs, long waitMs, long appStartMs, long registeringMs) {
        return Math.max(nowMs + waitMs, appStartMs + registeringMs);
    }

    /** The deadline of a wait starting now in {@code sc}'s application. */
    static long deadlineMs(SparkContext sc, long waitMs) {
        return deadlineMs(System.currentTimeMillis(), waitMs, sc.startTime(),
                sc.getConf().getTimeAsMs(REGISTERING, "30s"));
    }
}
