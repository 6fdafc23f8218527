package io.sparkjournal.events;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.journal.LaneSnapshot;
import io.sparkjournal.journal.LiveRecord;
import io.sparkjournal.journal.LoadReport;
import io.sparkjournal.journal.PreparedTx;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * The visible events of one lane below the Spark layer (EVENTS.md,
 * "Visibility: what a read returns"): committed EVENTS records in the order
 * the snapshot lists them, then those of prepared transactions the commit log
 * says committed; never open, rolled back, aborted or undecided ones. Each
 * comes with its deleted rows (the lane's deletion vectors plus its pending
 * delete requests, read before the snapshot as EVENTS.md requires: a delete is seen
 * in one or both, never in neither) and its batch's commit time, from a view
 * of the journal's commit log taken after the outcomes
 * ({@link LogView#committedAtMs}; a damaged commit-time segment fails the
 * read naming it, or under skipCorrupt leaves the time null with a warning).
 *
 * Paged events (EVENTS.md, "PAGE records and page files") are not records
 * here: {@link #pages} lists the page files the snapshot's live PAGE records
 * name, ordered by their lowest record id (as u64), and a reader reads
 * them first, oldest first, then {@link #records}, applying
 * {@link #deletions} to the pages' rows by ({@code _record_id}, {@code _row}).
 * A PAGE record that does not decode fails {@link #open} with
 * {@link PageRecordException}, one of a newer version with
 * {@link io.sparkjournal.format.FormatVersionException}.
 *
 * <p>Before anything is read the lane's root must carry the expected node id
 * ({@link WrongNodeException} otherwise).
 */
public final class LaneEvents implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger("sparkjournal.read");

    private final Path lane;
    private final String node;
    private final LaneSnapshot snapshot;
    private final Deletions deletions;
    private final CommitLog log;
    private final boolean skipCorrupt;
    private final Set<String> reported = new HashSet<>();      // damage already warned of
    private final List<PageRef> pages;

    private LaneEvents(Path lane, String node, LaneSnapshot snapshot, Deletions deletions, CommitLog log,
                       boolean skipCorrupt, List<PageRef> pages) {
        this.lane = lane;
        this.node = node;
        this.snapshot = snapshot;
        this.deletions = deletions;
        this.log = log;
        this.skipCorrupt = skipCorrupt;
        this.pages = pages;
    }

    /** Opens {@code lane} as {@code node} holds it; {@code skipCorrupt} leaves damaged files out (reported). */
    public static LaneEvents open(Path lane, String node, Path logBase, boolean skipCorrupt, boolean checksum)
            throws IOException {
        checkNode(lane, node);
        Deletions pending = DeleteRequests.pendingDeletions(lane);        // before the snapshot
        LaneSnapshot snapshot = LaneSnapshot.read(lane, checksum, skipCorrupt);
        try {
            Deletions deletions = new Deletions();
            List<PageRef> pages = new ArrayList<>();
            for (LiveRecord record : snapshot.records()) {
                if (record.userType() == UserTypes.DELETION_VECTOR) {
                    deletions.addVector(record.body(), "record " + record.recordId() + " of lane " + lane);
                } else if (record.userType() == UserTypes.PAGE) {
                    pages.add(PageRef.decode(record.body(), "record " + record.recordId() + " of lane " + lane));
                }
            }
            deletions.merge(pending);
            // pages ordered by their lowest record id (EVENTS.md, "PAGE records"; ids compare as u64)
            pages.sort((a, b) -> Long.compareUnsigned(a.firstId(), b.firstId()));
            return new LaneEvents(lane, node, snapshot, deletions, Resolver.shared().commitLog(logBase.toString()),
                    skipCorrupt, List.copyOf(pages));
        } catch (IOException | RuntimeException failed) {
            snapshot.close();
            throw failed;
        }
    }

    /**
     * The page files the snapshot's live PAGE records name, oldest paged
     * records first (ordered by their lowest record id, EVENTS.md, "PAGE
     * records"). Each is read only while this
     * LaneEvents is open; see the reader for what happens when maintenance
     * removes one meanwhile.
     */
    public List<PageRef> pages() {
        return pages;
    }

    /**
     * The lane's deleted rows (deletion vectors and pending delete requests),
     * for the pages' rows; records' own are in {@link VisibleRecord#deleted}.
     * Shared: callers only read it.
     */
    public Deletions deletions() {
        return deletions;
    }

    /** The lane folder. */
    public Path lane() {
        return lane;
    }

    /** The lane's snapshot, as loaded by {@link #open}; valid while this is open. */
    public LaneSnapshot snapshot() {
        return snapshot;
    }

    /** What the load noticed: torn tails, and under skipCorrupt the files left out and what they held. */
    public LoadReport report() {
        return snapshot.report();
    }

    /** The visible EVENTS records, committed ones first (read lazily, in order). */
    public Iterable<VisibleRecord> records() throws IOException {
        List<LiveRecord> visible = new ArrayList<>();
        for (LiveRecord record : snapshot.records()) {
            if (record.userType() == UserTypes.EVENTS) {
                visible.add(record);
            }
        }
        if (node != null) {
            String laneName = lane.getFileName().toString();
            Resolution outcomes = Resolver.shared().pass();
            for (PreparedTx tx : snapshot.prepared()) {
                if (outcomes.outcome(tx.xid(), new TxRef(node, laneName, tx.txId())) == Outcome.COMMITTED) {
                    for (LiveRecord record : tx.records()) {
                        if (record.userType() == UserTypes.EVENTS) {
                            visible.add(record);
                        }
                    }
                }
            }
        }
        LogView view = log.view();          // after the outcomes: every batch they saw decided is in it
        return () -> new Iterator<>() {
            private final Iterator<LiveRecord> next = visible.iterator();

            @Override
            public boolean hasNext() {
                return next.hasNext();
            }

            @Override
            public VisibleRecord next() {
                try {
                    return visible(next.next(), view);
                } catch (IOException error) {
                    throw new java.io.UncheckedIOException(error);
                }
            }
        };
    }

    private VisibleRecord visible(LiveRecord record, LogView view) throws IOException {
        EventsBody body = EventsBody.split(record.body());
        Long batchId = body.batchId();
        Long committedAtMs = body.query() == null || batchId == null ? null
                : committedAtMs(view, body.query(), batchId);
        Long commitMicros = committedAtMs == null ? null : committedAtMs * 1000L;
        Map<String, Long> units = new HashMap<>();
        Map<String, Object[]> stats = statistics(body.stats(), body.schema().getFields(), units);
        return new VisibleRecord(record.recordId(), body, batchId, commitMicros, stats, units,
                deletions.rowsOf(record.recordId()), record.bodyLength());
    }

    /** The batch's commit time by {@code view}; under skipCorrupt null for a damaged segment, reported. */
    private Long committedAtMs(LogView view, String query, long batch) throws IOException {
        try {
            return view.committedAtMs(query, batch);
        } catch (CommitLogException damaged) {
            if (!skipCorrupt) {
                throw damaged;
            }
            if (reported.add(damaged.getMessage())) {
                LOG.warning("lane " + lane + ": _commit_time of batches of query " + query
                        + " left null under skipCorrupt: " + damaged.getMessage());
            }
            return null;
        }
    }

    /** Milliseconds in a day: a date64 bound's unit per date32 day. */
    private static final long DAY_MS = 86_400_000L;

    /**
     * The bounds a record's {@code sparkjournal.stats} ({@code found}; null:
     * none) gives pruning, by column, for the record's {@code fields}
     * (EVENTS.md, "Statistics"): integers and timestamps as Long (timestamps
     * in their own unit, whose units per second go to {@code units}), floats
     * as Double, strings as String, dates as Long days. A date64 entry is in
     * milliseconds: its bounds become the days that can hold them (min
     * floored, max ceiled), so a filter in days compares exactly. An entry is
     * used only for a column of the record whose type the spec lists and only
     * when it is a two-element array of that representation: an integer
     * bound beyond a long (above 2^63 - 1, as a uint64 may hold), a number
     * where an integer belongs, a column not in the record, any other shape
     * is left out, so nothing is ever pruned on statistics this reader cannot
     * read exactly. Never throws on statistics.
     */
    public static Map<String, Object[]> statistics(JsonNode found, List<Field> fields, Map<String, Long> units) {
        Map<String, Object[]> stats = new HashMap<>();
        if (found == null || !found.isObject()) {
            return stats;
        }
        for (Field field : fields) {
            JsonNode bounds = found.get(field.getName());
            if (bounds == null || !bounds.isArray() || bounds.size() != 2) {
                continue;
            }
            ArrowType type = field.getType();
            Object low = bound(type, bounds.get(0), false);
            Object high = bound(type, bounds.get(1), true);
            if (low == null || high == null) {
                continue;
            }
            stats.put(field.getName(), new Object[] {low, high});
            if (type instanceof ArrowType.Timestamp stamp) {
                units.put(field.getName(), perSecond(stamp.getUnit()));
            }
        }
        return stats;
    }

    /** One bound of a column of {@code type} in the reader's terms, or null when it cannot be used. */
    private static Object bound(ArrowType type, JsonNode node, boolean high) {
        if (type instanceof ArrowType.Int || type instanceof ArrowType.Timestamp) {
            return exactLong(node);
        }
        if (type instanceof ArrowType.Date date) {
            Long value = exactLong(node);
            if (value == null || date.getUnit() == org.apache.arrow.vector.types.DateUnit.DAY) {
                return value;
            }
            long days = Math.floorDiv(value, DAY_MS);
            return high && Math.floorMod(value, DAY_MS) != 0 ? days + 1 : days;
        }
        if (type instanceof ArrowType.FloatingPoint) {
            if (node.isFloatingPointNumber() && Double.isFinite(node.doubleValue())) {
                return node.doubleValue();
            }
            Long whole = exactLong(node);
            return whole == null || new java.math.BigDecimal((double) whole)
                    .compareTo(java.math.BigDecimal.valueOf(whole)) != 0 ? null : Double.valueOf(whole);
        }
        if (type instanceof ArrowType.Utf8 || type instanceof ArrowType.LargeUtf8) {
            return node.isTextual() ? node.textValue() : null;
        }
        return null;
    }

    /** A JSON integer that a long holds exactly, else null (never wraps). */
    private static Long exactLong(JsonNode node) {
        return node.isIntegralNumber() && node.canConvertToLong() ? node.longValue() : null;
    }

    private static long perSecond(TimeUnit unit) {
        return switch (unit) {
            case SECOND -> 1L;
            case MILLISECOND -> 1_000L;
            case MICROSECOND -> 1_000_000L;
            case NANOSECOND -> 1_000_000_000L;
        };
    }

    /** The lane's root must carry {@code node} as its NODE_ID (null: a root without one, not checked). */
    static void checkNode(Path lane, String node) throws IOException {
        if (node == null) {
            return;
        }
        Path root = lane.toAbsolutePath().getParent();
        String found = NodeIds.read(root);
        if (!node.equals(found)) {
            throw new WrongNodeException("lane " + lane + " is held by node " + node + ", but this task runs on "
                    + "host " + java.net.InetAddress.getLocalHost().getHostName() + ", where " + root
                    + " has NODE_ID " + (found == null ? "none" : found) + ": Spark retries the task on another "
                    + "executor (set spark.locality.wait, e.g. 30s, so the scheduler waits for the lane's host)");
        }
    }

    @Override
    public void close() throws IOException {
        snapshot.close();
    }
}
