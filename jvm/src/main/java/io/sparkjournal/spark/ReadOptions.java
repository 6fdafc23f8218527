package io.sparkjournal.spark;

import java.io.Serializable;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Map;
import java.util.TreeMap;

import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The options of a read, parsed on the driver so a typo fails before any
 * task runs, with the names, defaults and messages the Python reader uses
 * too: the read options, the sink
 * option {@code commitLog}, Spark's own ({@code path}), and journal options.
 * Which names exist and what each accepts is not restated here: the jar
 * carries them as generated from their one declaration, in Python
 * ({@link OptionNames}).
 * Of the journal options a read uses {@code checksum} and (a stream's
 * warning of a hanging batch) {@code undecidedWarnAfter}; the rest are
 * checked by name only.
 */
public final class ReadOptions implements Serializable {

    private static final long serialVersionUID = 1L;
    /** missingHostWait's declared default: 5s. */
    static final long MISSING_HOST_WAIT_NANOS = 5_000_000_000L;
    /** undecidedWarnAfter's declared default: 600s. */
    static final long UNDECIDED_WARN_NANOS = 600_000_000_000L;

    private final String path;
    private final String commitLog;              // null: <root>/_commits as the driver sees it
    private final boolean skipCorrupt;
    private final boolean allowPartial;
    private final Long startingBatchId;          // null: from the first
    private final Long startingTimeMicros;       // null: from the first
    private final Long maxRows;
    private final Long maxBytes;
    private final long missingHostWaitNanos;
    private final boolean checksum;
    private final long undecidedWarnNanos;

    private ReadOptions(Map<String, String> read, String path, String commitLog, boolean checksum,
                        long undecidedWarnNanos) {
        this.path = path;
        this.commitLog = commitLog;
        this.checksum = checksum;
        this.undecidedWarnNanos = undecidedWarnNanos;
        this.skipCorrupt = bool(read, "skipCorrupt", false);
        this.allowPartial = bool(read, "allowPartialRead", false);
        this.startingBatchId = whole(read, "startingBatchId", 0);
        this.startingTimeMicros = timestamp(read.get("startingTimestamp"));
        this.maxRows = whole(read, "maxRowsPerTrigger", 1);
        this.maxBytes = read.containsKey("maxBytesPerTrigger")
                ? Sizes.parse("maxBytesPerTrigger", read.get("maxBytesPerTrigger"), OptionNames.accepts("maxBytesPerTrigger"))
                : null;
        this.missingHostWaitNanos = read.containsKey("missingHostWait")
                ? Times.nanos("missingHostWait", read.get("missingHostWait"), OptionNames.accepts("missingHostWait"))
                : MISSING_HOST_WAIT_NANOS;
    }

    /** The options Spark passed, checked; {@link OptionException} names what is wrong. */
    public static ReadOptions parse(CaseInsensitiveStringMap options) {
        String path = options.get("path");
        if (path == null || path.isBlank()) {
            throw new OptionException("a sparkjournal read needs a path: .load(path) or .option('path', ...)");
        }
        Map<String, String> read = new TreeMap<>();
        String commitLog = null;
        boolean checksum = true;
        long undecidedWarnNanos = UNDECIDED_WARN_NANOS;
        for (Map.Entry<String, String> option : options.asCaseSensitiveMap().entrySet()) {
            String key = option.getKey();
            String value = option.getValue();
            String known = OptionNames.readOption(key);
            if (known != null) {
                read.put(known, value);
            } else if (key.equalsIgnoreCase("commitLog")) {
                if (value == null || value.isBlank()) {
                    throw OptionException.invalid("commitLog", value, OptionNames.accepts("commitLog"));
                }
                commitLog = value;
            } else if (key.equalsIgnoreCase("txnAppId")) {
                throw OptionException.invalid("txnAppId", value, "nothing in a read: it is a write "
                        + "option, and a read sees every writer's events");
            } else if (OptionNames.isSparkOwn(key) || OptionNames.isSinkOption(key)) {
                continue;
            } else if (OptionNames.journalOption(key) == null) {
                throw OptionException.invalid(key, value, "nothing: it is not a sparkjournal option (known "
                        + "options: " + String.join(", ", OptionNames.journalOptions()) + ")");
            } else if (OptionNames.journalOption(key).equals("checksum")) {
                checksum = parseBool("checksum", value);
            } else if (OptionNames.journalOption(key).equals("undecidedWarnAfter")) {
                undecidedWarnNanos = Times.nanos("undecidedWarnAfter", value,
                        OptionNames.accepts("undecidedWarnAfter"));
            }
        }
        return new ReadOptions(read, path, commitLog, checksum, undecidedWarnNanos);
    }

    public String path() {
        return path;
    }

    /** The commit log's location as given, or null for the default under the root. */
    public String commitLog() {
        return commitLog;
    }

    public boolean skipCorrupt() {
        return skipCorrupt;
    }

    public boolean allowPartial() {
        return allowPartial;
    }

    public Long startingBatchId() {
        return startingBatchId;
    }

    public Long startingTimeMicros() {
        return startingTimeMicros;
    }

    public Long maxRows() {
        return maxRows;
    }

    public Long maxBytes() {
        return maxBytes;
    }

    /** How long planning waits for a host holding committed lanes to have a live executor, ms
     *  ({@link PlacementWait}). */
    public long missingHostWaitMs() {
        return missingHostWaitNanos / 1_000_000L;
    }

    public boolean checksum() {
        return checksum;
    }

    /** After how long a stream warns of an undecided batch holding its lanes, ms (0: never). */
    public long undecidedWarnAfterMs() {
        return undecidedWarnNanos / 1_000_000L;
    }

    private static boolean bool(Map<String, String> read, String name, boolean otherwise) {
        return read.containsKey(name) ? parseBool(name, read.get(name)) : otherwise;
    }

    static boolean parseBool(String name, String value) {
        return parseFlag(name, value, OptionNames.accepts(name));
    }

    /** config_keys.Flag: true/yes/1/on or false/no/0/off, any case; else refused naming
     *  {@code name} and what it {@code accepts}. */
    static boolean parseFlag(String name, String value, String accepts) {
        String text = value == null ? "" : value.trim().toLowerCase();
        if (text.equals("true") || text.equals("yes") || text.equals("1") || text.equals("on")) {
            return true;
        }
        if (text.equals("false") || text.equals("no") || text.equals("0") || text.equals("off")) {
            return false;
        }
        throw OptionException.invalid(name, value, accepts);
    }

    private static Long whole(Map<String, String> read, String name, long least) {
        String value = read.get(name);
        if (value == null) {
            return null;
        }
        try {
            long parsed = Long.parseLong(value.trim());
            if (parsed >= least) {
                return parsed;
            }
        } catch (NumberFormatException ignored) {
            // the message below says what is accepted
        }
        throw OptionException.invalid(name, value, OptionNames.accepts(name));
    }

    /** ISO 8601 (naive means UTC) or milliseconds since the epoch, as microseconds. */
    private static Long timestamp(String value) {
        if (value == null) {
            return null;
        }
        String text = value.trim();
        try {
            if (!text.isEmpty() && text.chars().allMatch(Character::isDigit)) {
                return Math.multiplyExact(Long.parseLong(text), 1000L);
            }
            Instant instant;
            try {
                instant = OffsetDateTime.parse(text.replace(" ", "T")).toInstant();
            } catch (DateTimeParseException naive) {
                instant = LocalDateTime.parse(text.replace(" ", "T")).toInstant(ZoneOffset.UTC);
            }
            return Math.addExact(Math.multiplyExact(instant.getEpochSecond(), 1_000_000L),
                    instant.getNano() / 1000L);
        } catch (DateTimeParseException | ArithmeticException | NumberFormatException bad) {
            throw OptionException.invalid("startingTimestamp", value, OptionNames.accepts("startingTimestamp"));
        }
    }
}
