package io.sparkjournal.spark;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;

import io.sparkjournal.events.LaneEvents;
import io.sparkjournal.events.StablePoint;

/**
 * What a stream's trigger must know of one lane, asked where the lane is:
 * on the driver when it sees the lane, else in a task on the lane's host
 * ({@link LaneProbes}). The lane's root must carry the lane's node id there
 * ({@link LaneEvents#open}; a task on another host fails, for Spark to retry
 * it where the lane is). Plain values only: it travels to the executor.
 *
 * <p>{@code cap}: the stream's end for this lane fixed by
 * {@code Trigger.AvailableNow} (null: up to the stable point);
 * {@code sizes}: whether the trigger has a read limit and needs the records'
 * sizes between {@code begin} and that end; {@code eventsColumns}: the
 * journal's events column names, in order (page footers are checked against
 * them, PageBatches.checkFooter), a serializable list.
 */
record LaneProbe(LanePartition lane, long begin, Long cap, boolean sizes, String logBase, boolean skipCorrupt,
                 boolean checksum, List<String> eventsColumns) implements Serializable {

    /** The lane's stable point, the sizes asked for, and what undecided transactions hold back:
     *  the committed rows between the stable point and where open transactions alone would put it
     *  (read only when undecided transactions hold the lane). */
    LaneProgress run() {
        try (LaneEvents events = LaneEvents.open(Path.of(lane.lane()), lane.node(), Path.of(logBase), skipCorrupt,
                checksum)) {
            StablePoint.Hold hold = StablePoint.hold(events.snapshot(), events.lane(), lane.node());
            long stable = hold.point();
            long end = Math.max(begin, cap != null ? cap : stable);
            List<long[]> pending = sizes && end > begin ? PendingRecords.of(events, eventsColumns, begin, end) : List.of();
            long heldBack = 0;
            if (hold.beforeUndecided() > stable) {
                for (long[] record : PendingRecords.of(events, eventsColumns, stable, hold.beforeUndecided())) {
                    heldBack += record[1];
                }
            }
            long ageMs = hold.oldestPreparedAtMs() > 0
                    ? Math.max(0, System.currentTimeMillis() - hold.oldestPreparedAtMs()) : 0;
            return new LaneProgress(lane.key(), stable, pending.toArray(new long[0][]), heldBack, ageMs);
        } catch (IOException error) {
            throw new UncheckedIOException(error.getMessage(), error);
        }
    }
}
