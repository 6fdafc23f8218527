package io.sparkjournal.spark;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * A stream's position: for each lane, by its key {@code <node or ->|<lane>}
 * ({@link LanePartition#key}), the next record id to read. The JSON,
 * {@code {"lanes": {"<key>": <next id>}}}, is the Python stream reader's too,
 * so a checkpoint written by either reader restarts with the other. Keys are
 * written in order, so equal positions have equal JSON, which is what Spark
 * compares to decide whether a trigger has new data.
 */
final class LaneOffsets extends Offset {

    static final LaneOffsets EMPTY = new LaneOffsets(Map.of());
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Map<String, Long> lanes;

    LaneOffsets(Map<String, Long> lanes) {
        this.lanes = Collections.unmodifiableMap(new TreeMap<>(lanes));
    }

    /** {lane key: next record id}, in key order. */
    Map<String, Long> lanes() {
        return lanes;
    }

    /** The next record id of lane {@code key}: 0 for a lane these offsets do not name yet. */
    long next(String key) {
        return lanes.getOrDefault(key, 0L);
    }

    @Override
    public String json() {
        try {
            return JSON.writeValueAsString(Map.of("lanes", lanes));
        } catch (JsonProcessingException impossible) {
            throw new IllegalStateException(impossible);
        }
    }

    /** Offsets as Spark's checkpoint holds them; a text that is not ours fails naming it. */
    static LaneOffsets parse(String json) {
        JsonNode lanes;
        try {
            lanes = JSON.readTree(json).get("lanes");
        } catch (JsonProcessingException | RuntimeException bad) {
            lanes = null;
        }
        if (lanes == null || !lanes.isObject()) {
            throw new IllegalArgumentException("the checkpoint's offset " + json + " is not a sparkjournal stream "
                    + "offset ({\"lanes\": {...}}): the checkpoint belongs to another source; start the stream "
                    + "from a new checkpoint location");
        }
        Map<String, Long> found = new TreeMap<>();
        lanes.fields().forEachRemaining(lane -> {
            if (!lane.getValue().canConvertToLong() || lane.getValue().asLong() < 0) {
                throw new IllegalArgumentException("the checkpoint's offset " + json + " gives lane " + lane.getKey()
                        + " the position " + lane.getValue() + ", not a record id: the checkpoint is damaged; "
                        + "start the stream from a new checkpoint location");
            }
            found.put(lane.getKey(), lane.getValue().asLong());
        });
        return new LaneOffsets(found);
    }
}
