package io.sparkjournal.spark;

/**
 * The metadata columns' values for one stored record: its batch id and
 * commit time (null while unknown: an untagged body, no decision), the host
 * and lane it was read from, and its record id.
 */
record RecordFacts(Long batchId, Long commitMicros, String host, String lane, long recordId) {

    /** The value of one of the record's metadata columns (null: unknown, or not one of them). */
    Object value(String column) {
        return switch (column) {
            case "_batch_id" -> batchId;
            case "_commit_time" -> commitMicros;
            case "_host" -> host;
            case "_lane" -> lane;
            case "_record_id" -> recordId;
            default -> null;
        };
    }
}
