package io.sparkjournal.spark;

import java.io.Serializable;

/**
 * One lane as a stream's trigger found it ({@link LaneProbe}): its key, its
 * stable point ({@link io.sparkjournal.events.StablePoint}), and, when a read
 * limit asked, {record id, rows, bytes} of its visible events from the
 * stream's position on ({@link PendingRecords}). Travels back to the driver.
 */
record LaneProgress(String key, long stable, long[][] sizes) implements Serializable {
}
