package io.sparkjournal.spark;

import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * What a JVM write task tells the driver: the JSON of its task message
 * (as a Python task sends it too: query, batch, node, host, root,
 * lane, tx, records, rows, bytes, partition, attempt, write_ms, prepare_ms,
 * dropped, epoch), or null when it wrote nothing (no rows, or its batch was
 * done already).
 */
record JournalCommitMessage(String json) implements WriterCommitMessage {
}
