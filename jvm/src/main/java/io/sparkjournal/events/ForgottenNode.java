package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.format.Constants;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.StrictJson;
import io.sparkjournal.journal.CodePoints;
import io.sparkjournal.journal.Shown;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A node an operator declared gone for good ({@code sparkjournal nodes
 * --forget}): its record {@code <log>/_forgotten/<node id>.json}
 * (COMMIT_LOG.md, "Forgotten nodes"). What the view credited to it when it
 * was forgotten ({@code batches}, {@code rows}, {@code bytes}) and the lanes
 * it named. Readers neither require nor read its lanes; writers refuse its
 * root ({@link #refuseRoot}).
 *
 * <p>{@link #parse} reads the record strictly (JSON.md): "format" first (an
 * integer above 1 is a {@link FormatVersionException}, refused before
 * anything else is read; any other value but 1 is damage), "node" the string
 * its file is named for, integers "forgotten_at_ms", "batches", "rows" and
 * "bytes" (0 .. 2^63 - 1, the range this reader holds), "lanes" a list of
 * strings; unknown names are ignored. Anything else is damage: a
 * {@link CommitLogException} naming the file and saying to restore it or
 * delete it (which restores the node).
 */
public record ForgottenNode(String node, long forgottenAtMs, long batches, long rows, long bytes,
                            List<String> lanes) {

    /** The folder of the records, under the log's base. */
    public static final String FOLDER = Constants.Paths.FORGOTTEN;
    /** The record format this code reads. */
    public static final int FORMAT = 1;
    private static final String[] COUNTS = {Constants.ForgottenNode.FORGOTTEN_AT_MS, Constants.ForgottenNode.BATCHES, Constants.ForgottenNode.ROWS, Constants.ForgottenNode.BYTES};

    public ForgottenNode {
        lanes = List.copyOf(lanes);
    }

    /** The record {@code raw} holds; {@code where} names its file, {@code node} the node its name says. */
    public static ForgottenNode parse(byte[] raw, String where, String node)
            throws CommitLogException, FormatVersionException {
        try {
            JsonNode data = StrictJson.parse(raw);
            StrictJson.format(data, FORMAT, "forgotten node record", where);
            String named = StrictJson.string(data, Constants.ForgottenNode.NODE);
            if (!named.equals(node)) {
                throw new IllegalArgumentException("it is the record of node " + Shown.text(named)
                        + ", but its file is named for node " + Shown.text(node));
            }
            long[] counts = new long[COUNTS.length];
            for (int i = 0; i < COUNTS.length; i++) {
                counts[i] = StrictJson.whole(data, COUNTS[i]);
            }
            List<String> names = new ArrayList<>();
            for (JsonNode lane : StrictJson.array(data, Constants.ForgottenNode.LANES)) {
                names.add(StrictJson.stringValue(lane, "an item of \"" + Constants.ForgottenNode.LANES + "\""));
            }
            return new ForgottenNode(node, counts[0], counts[1], counts[2], counts[3], names);
        } catch (IllegalArgumentException damage) {
            throw new CommitLogException("forgotten node record " + where + " is damaged ("
                    + damage.getMessage() + "): restore it from a backup, or delete it to restore the node",
                    damage);
        }
    }

    /**
     * Every forgotten node's record, by node id (code point order): one
     * listing of {@code _forgotten/}. Only {@code *.json} names are records
     * (a {@code *.tmp} is a forget in progress); one removed between the
     * listing and its read was restored meanwhile and is left out. A record
     * that cannot be read or parsed fails the whole read (see {@link #parse}).
     */
    static Map<String, ForgottenNode> readAll(CommitLog log) throws CommitLogException, FormatVersionException {
        Map<String, ForgottenNode> found = new TreeMap<>(CodePoints::compare);
        String folder = log.base() + "/" + FOLDER;
        for (String name : log.list(folder, false)) {
            if (!name.endsWith(".json")) {
                continue;
            }
            String path = folder + "/" + name;
            byte[] raw = log.readFile(path, "forgotten node record");
            if (raw != null) {
                String node = name.substring(0, name.length() - 5);
                found.put(node, parse(raw, path, node));
            }
        }
        return Collections.unmodifiableMap(found);
    }

    /**
     * The WARNING a reader logs when it finds the root of {@code node}, a
     * forgotten node, live on {@code hosts} (COMMIT_LOG.md, "Forgotten
     * nodes": quarantined): its lanes stay out of the read.
     */
    public static String quarantined(String path, String node, Collection<String> hosts) {
        String on = String.join(", ", new TreeSet<>(hosts));
        return path + ": node " + node + " is forgotten (sparkjournal nodes --forget) but its root is back on "
                + "host(s) " + (on.isEmpty() ? "this host" : on) + ": its lanes stay out of every read "
                + "(quarantined) until `sparkjournal nodes " + path + " --restore " + node + "`";
    }

    /**
     * A writer's check before it writes into {@code root}, whose NODE_ID is
     * {@code node} (null: none yet, never forgotten): an {@link EventsException}
     * (the same message as a Python writer's) when {@code forgotten} (a view's,
     * {@link LogView#forgotten}) holds that node: COMMIT_LOG.md, "Forgotten
     * nodes", writers refuse to write into such a root.
     */
    public static void refuseRoot(Map<String, ForgottenNode> forgotten, String node, String root)
            throws EventsException {
        if (node != null && forgotten.containsKey(node)) {
            throw new EventsException("root " + root + " carries NODE_ID " + node + ", which an operator "
                    + "forgot (sparkjournal nodes --forget): nothing written here would be read. Bring the "
                    + "node back with `sparkjournal nodes PATH --restore " + node + "`, or give this host a "
                    + "fresh root (move the old one aside)");
        }
    }
}
