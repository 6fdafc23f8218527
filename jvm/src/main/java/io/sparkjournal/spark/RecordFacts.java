package io.sparkjournal.spark;

import io.sparkjournal.format.Constants;

/**
 * The metadata columns' values for one stored record: its batch id and
 * commit time (null while unknown: an untagged body, no decision), the host
 * and lane it was read from, and its record id.
 */
record RecordFacts(Long batchId, Long commitMicros, String host, String lane, long recordId) {

    /** The value of one of the record's metadata columns (null: unknown, or not one of them). */
    Object value(String column) {
        return switch (column) {
            case Constants.MetadataColumns.BATCH_ID -> batchId;
            case Constants.MetadataColumns.COMMIT_TIME -> commitMicros;
            case Constants.MetadataColumns.HOST -> host;
            case Constants.MetadataColumns.LANE -> lane;
            case Constants.MetadataColumns.RECORD_ID -> recordId;
            default -> null;
        };
    }
}
