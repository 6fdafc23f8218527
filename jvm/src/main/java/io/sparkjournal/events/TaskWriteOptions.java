package io.sparkjournal.events;

import io.sparkjournal.journal.AppendConfig;
import io.sparkjournal.journal.DiskModes;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The journal options of a JVM task write, as the driver resolved them.
 *
 * <p>Contract: values come resolved by the options' one definition, in
 * Python's sparkjournal/config.py (every field of a {@code JournalConfig}:
 * integers for sizes, counts and modes, booleans for flags, strings for
 * choices), so nothing here parses "64k" or "0750" a second time; a value
 * of another kind is refused naming it. Each option is one of:
 * <ul>
 *   <li>the appender's own (fileSize, bufferSize, deviceBlockSize, maxIO,
 *       userVersion, largeRecordSize): given to {@link AppendConfig};
 *       createDirs; laneIdleTimeout (ns), how long an idle writer keeps its
 *       lane ({@link LaneWriters}); dirMode and fileMode, the
 *       {@link DiskModes} of what the task creates;</li>
 *   <li>the size limits and what a full lane does (maxSizeBytes,
 *       maxRootSizeBytes, addressFullPolicy): {@link FullLanes.Limits};</li>
 *   <li>one that changes nothing a task writes ({@link #NO_EFFECT});</li>
 *   <li>anything else is refused: an option added to config.py is refused
 *       here until it is placed in one of these sets.</li>
 * </ul>
 * So the JVM task writer enforces every journal option the Python task
 * writer does.
 */
public record TaskWriteOptions(AppendConfig appendConfig, boolean createDirs, long laneIdleNanos,
                               DiskModes modes, FullLanes.Limits limits) {

    private static final Set<String> APPENDER = Set.of("fileSize", "bufferSize", "deviceBlockSize",
            "maxIO", "userVersion", "largeRecordSize");
    /** Options that change nothing a task writes, or that the JVM honours otherwise
     *  (it always syncs; damage fails the task rather than going to attic/). */
    private static final Set<String> NO_EFFECT = Set.of("journalType",
            "syncTransactional", "syncNonTransactional", "datasync", "minFiles", "poolFiles",
            "bufferTimeout", "compactMinFiles", "compactPercentage", "checksum",
            "checkForCorruptFiles", "archive", "archiveDirectory", "lockWait", "recover",
            "retention", "pageSizeBytes", "maintenancePriority",
            "maintenanceBytesPerSecond", "commitLogCheckpointInterval", "commitLogRetainBatches",
            "commitLogRetainTime", "undecidedWarnAfter");
    /** addressFullPolicy's values, as config.py resolves them (upper case). */
    private static final Set<String> POLICIES = Set.of("PAGE", "BLOCK", "DROP", "FAIL");
    /** laneIdleTimeout's default, ns: how long an idle writer keeps its lane (LaneWriters). */
    private static final long IDLE_NANOS = 60_000_000_000L;

    /** The options of {@code resolved} (see the class); IllegalArgumentException names what
     *  is refused and why. */
    public static TaskWriteOptions of(Map<String, ?> resolved) {
        Map<String, Object> appender = new TreeMap<>();
        boolean createDirs = true;
        long idleNanos = IDLE_NANOS;
        long maxSize = -1;
        long maxRootSize = -1;
        String policy = FullLanes.Limits.NONE.policy();
        for (Map.Entry<String, ?> option : new TreeMap<>(resolved).entrySet()) {
            String key = option.getKey();
            Object value = option.getValue();
            if (APPENDER.contains(key)) {
                appender.put(key, integer(key, value));
            } else if (key.equals("maxSizeBytes")) {
                maxSize = integer(key, value);
            } else if (key.equals("maxRootSizeBytes")) {
                maxRootSize = integer(key, value);
            } else if (key.equals("addressFullPolicy")) {
                if (!(value instanceof String name) || !POLICIES.contains(name)) {
                    throw unresolved(key, value);
                }
                policy = name;
            } else if (key.equals("dirMode") || key.equals("fileMode")) {
                integer(key, value);                       // checked by DiskModes.fromOptions
            } else if (key.equals("laneIdleTimeout")) {
                idleNanos = integer(key, value);
            } else if (key.equals("createDirs")) {
                if (!(value instanceof Boolean flag)) {
                    throw unresolved(key, value);
                }
                createDirs = flag;
            } else if (!NO_EFFECT.contains(key)) {
                throw new IllegalArgumentException("option " + key + " is not a journal option the"
                        + " JVM task writer knows; it takes sparkjournal's journal options"
                        + " (config.py JOURNAL) only");
            }
        }
        return new TaskWriteOptions(AppendConfig.fromOptions(appender), createDirs, idleNanos,
                DiskModes.fromOptions(resolved), new FullLanes.Limits(maxSize, maxRootSize, policy));
    }

    private static long integer(String key, Object value) {
        if (value instanceof Number number && !(value instanceof Double || value instanceof Float)) {
            return number.longValue();
        }
        throw unresolved(key, value);
    }

    private static IllegalArgumentException unresolved(String key, Object value) {
        return new IllegalArgumentException("option " + key + " = " + value + " is not a resolved"
                + " value: the JVM task writer takes options as sparkjournal.config.load_config"
                + " resolves them (integers, booleans), never their text");
    }
}
