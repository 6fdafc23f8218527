package io.sparkjournal.spark;

import java.io.Serializable;

/**
 * One lane as a stream's trigger found it ({@link LaneProbe}): its key, its
 * stable point ({@link io.sparkjournal.events.StablePoint}), and, when a read
 * limit asked, {record id, rows, bytes} of its visible events from the
 * stream's position on ({@link PendingRecords}); for the stream's metrics
 * ({@link StreamMetrics}), its committed rows held back behind the stable
 * point by undecided transactions, and the age then (ms, by the lane's host's
 * clock) of the oldest undecided transaction holding it (0: none, or not
 * known). Travels back to the driver.
 */
record LaneProgress(String key, long stable, long[][] sizes, long heldBackRows, long oldestUndecidedAgeMs)
        implements Serializable {
}
