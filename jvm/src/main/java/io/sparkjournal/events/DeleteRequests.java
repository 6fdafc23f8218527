package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.Shown;
import io.sparkjournal.journal.StrictJson;

/**
 * Pending delete requests as readers see them (EVENTS.md): a
 * request of kind "delete" holds {"records": {"<record id>": null | [original
 * positions]}}; it is visible as soon as it is durable, so a reader reads the
 * lane's requests before its records and adds them to the lane's deletion
 * vectors (the writer removes a request only after its records are durable:
 * a delete is seen in one of the two, or both, never in neither).
 *
 * <p>Read strictly (JSON.md; EVENTS.md, "Lane requests"): "records" an
 * object whose every name is a record id (1 to 20 ASCII digits, below 2^64),
 * no two naming the same id, and every value null or a list of integers
 * 0 .. 2^32 - 1; "why", where present, a string. Anything else is a
 * {@link RequestException} naming the request. A record listed with [] is
 * present with no position ({@link Deletions}).
 */
public final class DeleteRequests {

    public static final String DELETE = io.sparkjournal.format.Constants.RequestKinds.DELETE;
    private static final BigInteger U64 = BigInteger.ONE.shiftLeft(64);
    private static final Pattern RECORD_ID = Pattern.compile("[0-9]{1,20}");

    private DeleteRequests() {
    }

    /**
     * {record id (u64 in a long): original positions, or null for the whole
     * record} of one delete request; {@code where} names it in the error.
     */
    public static Map<Long, long[]> records(ObjectNode request, String where)
            throws RequestException {
        try {
            StrictJson.string(request, Constants.DeleteRequest.WHY, "");
            Map<Long, long[]> parsed = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> entry : StrictJson.object(request, Constants.DeleteRequest.RECORDS).properties()) {
                String key = entry.getKey();
                if (!RECORD_ID.matcher(key).matches() || new BigInteger(key).compareTo(U64) >= 0) {
                    throw new StrictJson.Refused("\"records\" names " + Shown.text(key)
                            + ", not a record id (1 to 20 ASCII digits, below 2^64)");
                }
                if (parsed.containsKey(new BigInteger(key).longValue())) {
                    throw new StrictJson.Refused("two names of \"records\" name record id "
                            + new BigInteger(key));
                }
                long[] rows = null;
                JsonNode value = entry.getValue();
                if (!value.isNull()) {
                    JsonNode positions = StrictJson.arrayValue(value, "the rows of record " + key);
                    rows = new long[positions.size()];
                    for (int i = 0; i < rows.length; i++) {
                        rows[i] = StrictJson.integer(positions.get(i), "a row position of record " + key,
                                0, (1L << 32) - 1);
                    }
                }
                parsed.put(new BigInteger(key).longValue(), rows);
            }
            return parsed;
        } catch (StrictJson.Refused damaged) {
            throw new RequestException("delete request " + where + " is damaged (" + damaged.getMessage()
                    + "): it must hold \"records\": {\"<record id>\": null or [row positions, each 0 to"
                    + " 2^32 - 1]}; remove it and submit the delete again");
        }
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
