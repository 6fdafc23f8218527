package io.sparkjournal.spark;

import java.io.Serializable;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One lane to read: its folder as the host holding it names it, the node id
 * its root must carry there (null: a root without NODE_ID, read wherever the
 * task runs, as the Python reader does) and the Spark locations that hold it.
 * Plain values only: it travels to the executor.
 */
public final class LanePartition implements InputPartition, Serializable {

    private static final long serialVersionUID = 1L;

    private final String lane;
    private final String node;
    private final String[] locations;

    LanePartition(String lane, String node, String[] locations) {
        this.lane = lane;
        this.node = node;
        this.locations = locations;
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
        return "lane " + lane + " of node " + node;
    }
}
