package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.format.Constants;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;

/**
 * What reads leave out because nodes were forgotten (COMMIT_LOG.md,
 * "Forgotten nodes"): the forgotten nodes of a view, in code point
 * order, and the committed batches and rows the view credits to them - its
 * checkpoint's node counts plus every commit entry after it (a batch once
 * per node however many of its lanes it wrote; rows the sum of the node's
 * txs' "rows"). Abort entries credit nothing. Every read reports these, in
 * its log ({@link #line}) and its metrics.
 */
public record ForgottenEvents(List<String> nodes, long batches, long events) {

    /** Nothing forgotten. */
    public static final ForgottenEvents NONE = new ForgottenEvents(List.of(), 0, 0);

    public ForgottenEvents {
        nodes = List.copyOf(nodes);
    }

    /** The committed events {@code view} credits to its forgotten nodes. */
    public static ForgottenEvents of(LogView view) {
        Map<String, ForgottenNode> forgotten = view.forgotten();
        if (forgotten.isEmpty()) {
            return NONE;
        }
        long batches = 0;
        long rows = 0;
        for (String node : forgotten.keySet()) {
            LogCheckpoint.Node folded = view.checkpoint().nodes().get(node);
            if (folded != null) {
                batches += folded.batches();
                rows += folded.rows();
            }
        }
        for (NavigableMap<Long, Decision> entries : view.entries().values()) {
            for (Decision decision : entries.values()) {
                Set<String> nodesOfBatch = new HashSet<>();
                for (ObjectNode tx : decision.aborted() ? List.<ObjectNode>of() : decision.txs()) {
                    String node = tx.get(Constants.EntryTx.NODE).textValue();
                    if (!forgotten.containsKey(node)) {
                        continue;
                    }
                    JsonNode count = tx.get(Constants.EntryTx.ROWS);
                    rows += count == null ? 0 : count.longValue();
                    if (nodesOfBatch.add(node)) {
                        batches++;
                    }
                }
            }
        }
        return new ForgottenEvents(List.copyOf(forgotten.keySet()), batches, rows);
    }

    /** The read's log line (COMMIT_LOG.md, "Forgotten nodes": reported as forgotten events), worded
     *  as the Python reader's; "" when nothing is forgotten. */
    public String line(String path) {
        return nodes.isEmpty() ? "" : path + ": " + String.format(Locale.ROOT, "%,d", events)
                + " committed events of " + nodes.size() + " forgotten node(s) (" + String.join(", ", nodes)
                + ") are not read (sparkjournal nodes --forget; --restore brings a node back)";
    }
}
