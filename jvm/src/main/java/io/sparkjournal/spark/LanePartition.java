package io.sparkjournal.spark;

import java.io.Serializable;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One lane to read: its folder as the host holding it names it, the node id
 * its root must carry there (null: a root without NODE_ID, read wherever the
 * task runs, as the Python reader does), the Spark locations that hold it,
 * and the record ids to read, {@code [firstId, endId)}: the whole lane for a
 * batch scan, one micro-batch's range for a stream. Plain values only: it
 * travels to the executor.
 */
public final class LanePartition implements InputPartition, Serializable {

    private static final long serialVersionUID = 1L;

    private final String lane;
    private final String node;
    private final String[] locations;
    private final long firstId;
    private final long endId;

    LanePartition(String lane, String node, String[] locations) {
        this(lane, node, locations, 0, Long.MAX_VALUE);
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
        return recordId >= firstId && recordId < endId;
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

    /** The host part of the node id ({@code uuid@host}), or null. */
    public String host() {
        if (node == null) {
            return null;
        }
        int at = node.lastIndexOf('@');
        String host = at < 0 ? "" : node.substring(at + 1);
        return host.isEmpty() ? null : host;
    }

    @Override
    public String[] preferredLocations() {
        return locations.clone();
    }

    @Override
    public String toString() {
        return "lane " + lane + " of node " + node
                + (firstId == 0 && endId == Long.MAX_VALUE ? "" : ", records " + firstId + ".." + (endId - 1));
    }
}
