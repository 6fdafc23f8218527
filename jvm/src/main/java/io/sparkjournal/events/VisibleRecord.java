package io.sparkjournal.events;

import java.util.Map;

/**
 * One visible EVENTS record of a lane, as a reader needs it: its id, its body
 * (its Arrow IPC messages located over the lane's memory map, valid while
 * the lane's {@link LaneEvents} is open), the batch it belongs to and when that batch
 * was committed (null while unknown), the min/max its writer stored
 * ({column: [min, max]}, Long / Double / String values, only those
 * {@link LaneEvents#statistics} can use; timestamps in their own unit,
 * {@code unitsPerSecond} gives it, dates in days), its deleted
 * original positions (ascending; empty: none; null: every row), and its
 * stored body's length in bytes.
 */
public record VisibleRecord(long recordId, EventsBody body, Long batchId, Long commitMicros,
                            Map<String, Object[]> stats, Map<String, Long> unitsPerSecond, long[] deleted,
                            int bodyLength) {
}
