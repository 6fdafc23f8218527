package io.sparkjournal.spark;

import java.io.Serializable;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One lane to read: its folder as the host holding it names it, the node id
 * its root must carry there (null: a root without NODE_ID, read wherever the
 * task runs, EVENTS.md, "A node root"), the Spark locations that hold it,
 * and the record ids to read, {@code [firstId, endId)}: the whole lane for a
 * batch scan ({@link #WHOLE_LANE}), one micro-batch's range for a stream.
 * Record ids are u64 (FORMAT.md) held in a long: every comparison of them
 * is unsigned. Plain values only: it
 * travels to the executor.
 */
public final class LanePartition implements InputPartition, Serializable {

    private static final long serialVersionUID = 1L;

    private final String lane;
    private final String node;
    private final String[] locations;
    private final long firstId;
    private final long endId;

    /** The end of a whole-lane read: 2^64 - 1, the largest u64 (no lane hands it out). */
    static final long WHOLE_LANE = -1L;

    LanePartition(String lane, String node, String[] locations) {
        this(lane, node, locations, 0, WHOLE_LANE);
    }

    LanePartition(String lane, String node, String[] locations, long firstId, long endId) {
        this.lane = lane;
        this.node = node;
        this.locations = locations;
        this.firstId = firstId;
        this.endId = endId;
    }

    /** The same lane and places, read over {@code [firstId, endId)}. */
    LanePartition range(long first, long end) {
        return new LanePartition(lane, node, locations, first, end);
    }

    /** The first record id read. */
    public long firstId() {
        return firstId;
    }

    /** The record id the read stops before. */
    public long endId() {
        return endId;
    }

    /** Whether record {@code recordId} is in the range read. */
    public boolean inRange(long recordId) {
        return Long.compareUnsigned(recordId, firstId) >= 0 && Long.compareUnsigned(recordId, endId) < 0;
    }

    /** The key a stream's offsets name the lane by: {@code <node or ->|<lane folder name>}. */
    public String key() {
        return (node == null ? "-" : node) + "|" + java.nio.file.Path.of(lane).getFileName();
    }

    public String lane() {
        return lane;
    }

    public String node() {
        return node;
    }

    /** The host of the node id ({@link #hostOf}): the {@code _host} of every row read. */
    public String host() {
        return hostOf(node);
    }

    /**
     * The host of a node id (EVENTS.md, "A node root"): the text after its
     * last {@code @}, the whole id if it has none; null for no id or an empty host.
     */
    static String hostOf(String node) {
        if (node == null) {
            return null;
        }
        String host = node.substring(node.lastIndexOf('@') + 1);
        return host.isEmpty() ? null : host;
    }

    @Override
    public String[] preferredLocations() {
        return locations.clone();
    }

    @Override
    public String toString() {
        return "lane " + lane + " of node " + node
                + (firstId == 0 && endId == WHOLE_LANE ? "" : ", records " + Long.toUnsignedString(firstId)
                        + ".." + Long.toUnsignedString(endId - 1));
    }
}
