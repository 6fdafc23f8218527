package io.sparkjournal.events;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes commit log files as COMMIT_LOG.md lays them out, for the unit tests
 * of the reading side: entries (commit and abort entries of any epoch),
 * checkpoints (given as JSON text) and commit-time segments. Files are written in place, not through *.tmp.
 */
final class LogFiles {

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private LogFiles() {
    }

    /** One tx of an entry. */
    record Tx(String node, String lane, long tx) {
    }

    /** Writes the entry of {@code batch} of {@code query}, committed at {@code atMs}, naming {@code txs}. */
    static Path entry(Path log, String query, long batch, long atMs, Tx... txs) throws IOException {
        return entry(log, query, batch, 0, false, atMs, txs);
    }

    /** Writes the commit entry of epoch {@code epoch} of the batch ({@code <batch>.<epoch>.json} past 0). */
    static Path commitAt(Path log, String query, long batch, long epoch, long atMs, Tx... txs) throws IOException {
        return entry(log, query, batch, epoch, false, atMs, txs);
    }

    /** Writes the abort entry of epoch {@code epoch} of the batch, decided at {@code atMs}. */
    static Path abort(Path log, String query, long batch, long epoch, long atMs) throws IOException {
        return entry(log, query, batch, epoch, true, atMs);
    }

    private static Path entry(Path log, String query, long batch, long epoch, boolean aborted, long atMs,
                              Tx... txs) throws IOException {
        ObjectNode entry = JSON.objectNode().put("format", 1).put("query", query).put("batch", batch)
                .put("committed_at_ms", atMs);
        if (epoch != 0) {
            entry.put("epoch", epoch);
        }
        if (aborted) {
            entry.put("aborted", true);
        }
        ArrayNode list = entry.putArray("txs");
        for (Tx tx : txs) {
            list.addObject().put("node", tx.node()).put("lane", tx.lane()).put("tx", tx.tx()).put("rows", 1);
        }
        Path file = log.resolve(query).resolve(String.format("%020d", batch)
                + (epoch == 0 ? "" : "." + epoch) + ".json");
        Files.createDirectories(file.getParent());
        Files.writeString(file, new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(entry));
        return file;
    }

    /** Writes checkpoint {@code seq} holding {@code json} (single quotes stand for double ones). */
    static Path checkpoint(Path log, long seq, String json) throws IOException {
        Path file = log.resolve("_checkpoints").resolve(String.format("%020d.json", seq));
        Files.createDirectories(file.getParent());
        Files.writeString(file, json.replace('\'', '"'));
        return file;
    }

    /** Writes segment {@code segment} of {@code query} with {@code slots}. */
    static Path segment(Path log, String query, long segment, long... slots) throws IOException {
        Path file = log.resolve("_times").resolve(query).resolve(String.format("%020d.times", segment));
        Files.createDirectories(file.getParent());
        Files.write(file, segmentBytes(segment, slots));
        return file;
    }

    /** A segment's bytes: magic, format 1, first batch, n, the slots, CRC-32C. */
    static byte[] segmentBytes(long segment, long... slots) {
        return CommitTimes.encode(segment * CommitTimes.SLOTS, slots);      // Python's bytes: LogMaintenanceTest
    }
}
