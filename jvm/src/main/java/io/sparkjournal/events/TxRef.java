package io.sparkjournal.events;

/**
 * One prepared transaction as the commit log names it: the node root (its
 * node id, "uuid@host"), the lane folder's name ("lane-000") and the tx id.
 * {@code tx} is a journal tx id, a u64 held in a long (compare it as
 * unsigned). Twin of commit_log.TxRef.
 */
public record TxRef(String node, String lane, long tx) {

    public TxRef {
        if (node == null || lane == null) {
            throw new NullPointerException("a TxRef needs a node id and a lane");
        }
    }

    @Override
    public String toString() {
        return "tx " + Long.toUnsignedString(tx) + " of lane " + lane + " of node " + node;
    }
}
