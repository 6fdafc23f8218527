package io.sparkjournal.events;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.format.FormatVersionException;
import java.math.BigInteger;

/**
 * The one refusal of a JSON file of the events layer (a commit log entry or
 * checkpoint, a lane request) whose {@code "format"} is a whole number above
 * the one this reader knows (FORMAT.md, "Newer formats are refused"): nothing
 * else of it is read. A number beyond a long is reported as 2^63 - 1.
 */
final class NewerFormat {

    private NewerFormat() {
    }

    /** Throws FormatVersionException if {@code format} is a whole number above {@code known}. */
    static void refuse(JsonNode format, String what, String where, int known) throws FormatVersionException {
        if (PyJson.isInt(format) && format.bigIntegerValue().compareTo(BigInteger.valueOf(known)) > 0) {
            BigInteger version = format.bigIntegerValue();
            throw new FormatVersionException(what, where,
                    version.bitLength() > 63 ? Long.MAX_VALUE : version.longValue(), known);
        }
    }
}
