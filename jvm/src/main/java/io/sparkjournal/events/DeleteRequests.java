package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Pending delete requests as readers see them (events/lane_deletes.py): a
 * request of kind "delete" holds {"records": {"<record id>": null | [original
 * positions]}}; it is visible as soon as it is durable, so a reader reads the
 * lane's requests before its records and adds them to the lane's deletion
 * vectors (the writer removes a request only after its records are durable:
 * a delete is seen in one of the two, or both, never in neither).
 *
 * <p>Shape, as Python checks it: every key is 1 to 20 ASCII digits naming a
 * u64, every value null or a list of integers 0 .. 2^32 - 1; anything else is
 * a {@link RequestException} naming the request. As in Python, keys that name
 * one id ("7" and "007") keep the last one's rows, and a request that lists a
 * record with [] makes it present with no position ({@link Deletions}).
 */
public final class DeleteRequests {

    public static final String DELETE = "delete";
    private static final BigInteger U64 = BigInteger.ONE.shiftLeft(64);

    private DeleteRequests() {
    }

    /**
     * {record id (u64 in a long): original positions, or null for the whole
     * record} of one delete request; {@code where} names it in the error.
     */
    public static Map<Long, long[]> records(ObjectNode request, String where)
            throws RequestException {
        JsonNode records = request.get("records");
        if (records != null && records.isObject()) {
            Map<Long, long[]> parsed = new LinkedHashMap<>();
            boolean good = true;
            Iterator<Map.Entry<String, JsonNode>> it = records.properties().iterator();
            while (good && it.hasNext()) {
                Map.Entry<String, JsonNode> entry = it.next();
                String key = entry.getKey();
                good = !key.isEmpty() && key.length() <= 20
                        && key.chars().allMatch(c -> c >= '0' && c <= '9')
                        && new BigInteger(key).compareTo(U64) < 0;
                long[] rows = null;
                JsonNode value = entry.getValue();
                if (good && !value.isNull()) {
                    good = value.isArray();
                    rows = new long[good ? value.size() : 0];
                    for (int i = 0; good && i < rows.length; i++) {
                        JsonNode position = value.get(i);
                        good = PyJson.isInt(position) && position.canConvertToLong()
                                && position.longValue() >= 0 && position.longValue() < (1L << 32);
                        rows[i] = good ? position.longValue() : 0;
                    }
                }
                if (good) {
                    parsed.put(new BigInteger(key).longValue(), rows);
                }
            }
            if (good) {
                return parsed;
            }
        }
        throw new RequestException("delete request " + where + " is damaged: it must hold "
                + "\"records\": {\"<record id>\": null or [row positions, each 0 to 2^32 - 1]}; "
                + "remove it and submit the delete again");
    }

    /** What the lane's pending delete requests delete: read this before loading the lane. */
    public static Deletions pendingDeletions(Path lane) throws IOException {
        Deletions deletions = new Deletions();
        for (LaneRequests.Request request : LaneRequests.pending(lane)) {
            if (DELETE.equals(request.kind())) {
                for (Map.Entry<Long, long[]> entry
                        : records(request.body(), request.path().toString()).entrySet()) {
                    deletions.add(entry.getKey(), entry.getValue());
                }
            }
        }
        return deletions;
    }
}
