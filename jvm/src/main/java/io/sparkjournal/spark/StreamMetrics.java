package io.sparkjournal.spark;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

import io.sparkjournal.events.ForgottenEvents;

/**
 * What a stream reports in each trigger's progress
 * ({@code StreamingQueryProgress.sources[].metrics}, through
 * {@code ReportsSourceMetrics}), as its last trigger's planning and lane
 * probes found it:
 * <ul>
 *   <li>{@value #FORGOTTEN}: committed events of forgotten nodes the stream
 *       does not read ({@link ForgottenEvents});</li>
 *   <li>{@value #OLDEST_UNDECIDED}: the age, ms, of the oldest undecided
 *       prepared transaction holding a lane's stable point, from its XID's
 *       PREPARE time (0: none, or no XID says when);</li>
 *   <li>{@value #HELD_BACK}: committed rows past the lanes' stable points
 *       that the stream cannot read yet because undecided transactions hold
 *       those points.</li>
 * </ul>
 * Values are whole numbers, as text (Spark's map of strings).
 */
record StreamMetrics(long forgottenEvents, long oldestUndecidedAgeMs, long heldBackRows) {

    static final String FORGOTTEN = ForgottenEventsMetric.NAME;
    static final String OLDEST_UNDECIDED = "oldestUndecidedAgeMs";
    static final String HELD_BACK = "heldBackRows";
    static final StreamMetrics NONE = new StreamMetrics(0, 0, 0);

    /** A trigger's metrics: its plan's forgotten events and what its lanes' probes found. */
    static StreamMetrics of(ForgottenEvents forgotten, Collection<LaneProgress> lanes) {
        long oldest = 0;
        long heldBack = 0;
        for (LaneProgress lane : lanes) {
            oldest = Math.max(oldest, lane.oldestUndecidedAgeMs());
            heldBack += lane.heldBackRows();
        }
        return new StreamMetrics(forgotten.events(), oldest, heldBack);
    }

    /** The metrics as the progress shows them, in this order. */
    Map<String, String> asMap() {
        Map<String, String> shown = new LinkedHashMap<>();
        shown.put(FORGOTTEN, Long.toString(forgottenEvents));
        shown.put(OLDEST_UNDECIDED, Long.toString(oldestUndecidedAgeMs));
        shown.put(HELD_BACK, Long.toString(heldBackRows));
        return shown;
    }
}
