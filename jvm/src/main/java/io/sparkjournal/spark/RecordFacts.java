package io.sparkjournal.spark;

/**
 * The metadata columns' values for one stored record: its batch id and
 * commit time (null while unknown: an untagged body, no decision), the host
 * and lane it was read from, and its record id.
 */
record RecordFacts(Long batchId, Long commitMicros, String host, String lane, long recordId) {
}
