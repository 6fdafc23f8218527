package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.CodePoints;
import io.sparkjournal.journal.Shown;
import io.sparkjournal.format.FormatVersionException;
import java.io.IOException;
import java.math.BigInteger;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The reading side of a commit log on a local path (COMMIT_LOG.md):
 *
 * <pre>
 *   &lt;base&gt;/&lt;query&gt;/&lt;batch, 20 digits&gt;.json            an entry of epoch 0: one {@link Decision}
 *   &lt;base&gt;/&lt;query&gt;/&lt;batch, 20 digits&gt;.&lt;epoch&gt;.json    an entry of a later epoch of that batch
 *   &lt;base&gt;/_checkpoints/&lt;seq, 20 digits&gt;.json       a checkpoint ({@link LogCheckpoint})
 *   &lt;base&gt;/_times/&lt;query&gt;/&lt;segment&gt;.times           commit times of folded batches ({@link CommitTimes})
 *   &lt;base&gt;/_forgotten/&lt;node id&gt;.json               a node declared gone ({@link ForgottenNode})
 *   &lt;base&gt;/schema.arrow                              the journal's Arrow schema (an IPC message)
 *   &lt;base&gt;/LOG_ID                                    the log's random id
 * </pre>
 *
 * Decisions are read through {@link #view()}: a checkpoint plus the entries
 * after it, refreshed per call and reused while the checkpoint is unchanged
 * ({@link LogViewReader}). Nothing here grows with the number of entries ever
 * read: the newest view holds the entries after its checkpoint (every entry of
 * a log without checkpoints), and {@link CommitTimes} a few segments. Thread-safe. Only local paths and
 * {@code file://} URIs are read here.
 *
 * <p>Errors: a file that cannot be read or a folder that cannot be listed is a
 * {@link CommitLogException} (a missing one is simply absent); an entry that is
 * not a decision is a CommitLogException or {@link FormatVersionException}
 * ({@link Decision#fromJson}); a query id that cannot name a folder is an
 * {@link EventsException}.
 */
public final class CommitLog {

    public static final String SCHEMA_FILE = Constants.Paths.SCHEMA_FILE;
    public static final String LOG_ID_FILE = Constants.Paths.LOG_ID_FILE;
    /** The log's own folders: never a query's. */
    public static final List<String> OWN_FOLDERS = List.of(Constants.Paths.CHECKPOINTS, Constants.Paths.TIMES,
            Constants.Paths.FORGOTTEN);

    private final String uri;
    private final String base;
    private final CommitTimes times;
    private final LogViewReader views = new LogViewReader(this);
    private volatile String logId;

    /** The log at {@code uri}: a local path (relative to the working folder) or a file:// URI. */
    public CommitLog(String uri) throws CommitLogException {
        this.uri = uri;
        if (uri.contains("://")) {
            try {
                URI parsed = new URI(uri);
                if (!"file".equals(parsed.getScheme()) || parsed.getRawAuthority() != null
                        || parsed.getPath() == null) {
                    throw new CommitLogException("this JVM reader reads commit logs on local "
                            + "paths and file:// URIs only");
                }
                this.base = parsed.getPath();
            } catch (URISyntaxException | CommitLogException unusable) {
                throw new CommitLogException("commit log location " + Shown.text(uri)
                        + " cannot be used: " + unusable.getMessage() + ". Give a local path or "
                        + "a URI pyarrow.fs supports (hdfs://, s3://, gs://)", unusable);
            }
        } else {
            this.base = Paths.get(uri).toAbsolutePath().normalize().toString();
        }
        this.times = new CommitTimes(base);
    }

    public String uri() {
        return uri;
    }

    /** The log's folder, absolute. */
    public String base() {
        return base;
    }

    /** A query id as one path segment; EventsException for one that cannot be. */
    public static String safeName(String query) throws EventsException {
        if (query.isEmpty() || query.contains("/") || query.equals(".") || query.equals("..")
                || query.indexOf('\0') >= 0) {
            throw new EventsException("query id " + Shown.text(query) + " cannot name a commit log "
                    + "folder: use letters, digits, '-', '_' or '.' and no '/'");
        }
        return query;
    }

    /** The path of a batch's entry of epoch 0 (COMMIT_LOG.md, "Entries"), as messages name it. */
    public String decisionPath(String query, long batch) throws EventsException {
        return entryPath(query, batch, 0);
    }

    /** The path of the entry of epoch {@code epoch} of a batch: {@code <batch>.json} for 0, else
     *  {@code <batch>.<epoch>.json}. */
    public String entryPath(String query, long batch, long epoch) throws EventsException {
        return base + "/" + safeName(query) + "/" + String.format("%020d", batch)
                + (epoch == 0 ? "" : "." + epoch) + ".json";
    }

    /**
     * The view of the log now: its newest readable checkpoint plus the
     * entries after it (COMMIT_LOG.md, "The view"). Take one per plan (or per
     * task, or per pass of outcomes) and decide everything of it against it.
     */
    public LogView view() throws EventsException, FormatVersionException {
        return views.view();
    }

    /** The commit times of the log's folded batches. */
    public CommitTimes times() {
        return times;
    }

    /**
     * Whether a commit entry of the batch exists now (read or not by any
     * view): its entries are read from epoch 0 up while each is an abort
     * entry (the entry of epoch e exists only after the abort entry of e - 1).
     * A batch whose entries retention has removed reads as without one: the
     * view knows it ({@link LogView#done}). A damaged entry is thrown, as
     * {@link #entry}.
     */
    public boolean hasEntry(String query, long batch) throws EventsException, FormatVersionException {
        for (long epoch = 0; epoch >= 0; epoch++) {
            Decision found = entry(query, batch, epoch);
            if (found == null || !found.aborted()) {
                return found != null;
            }
        }
        return false;
    }

    /**
     * The entry of epoch {@code epoch} of the batch as read now (never
     * cached), or null if it has none. An entry holding another query, batch
     * or epoch than its file is named for is a CommitLogException, as damage.
     */
    Decision entry(String query, long batch, long epoch) throws EventsException, FormatVersionException {
        String path = entryPath(query, batch, epoch);
        byte[] raw = readFile(path, "commit log entry");
        if (raw == null) {
            return null;
        }
        Decision found = Decision.fromJson(raw, path);
        if (!found.query().equals(query) || found.batch() != batch || found.epoch() != epoch) {
            throw new CommitLogException("commit log entry " + path + " holds the decision of batch "
                    + found.batch() + " (epoch " + found.epoch() + ") of query " + Shown.text(found.query())
                    + ": restore the file from a backup");
        }
        return found;
    }


    /**
     * The batch ids a query's folder names, ascending (COMMIT_LOG.md,
     * "Entries"): every file named {@code <digits>.json} or
     * {@code <digits>.<epoch>.json} (ASCII digits, any number of them; the
     * epoch's without a leading zero). A number beyond a long counts as 2^63 - 1.
     * A listing only: the view reads just the names the spec gives entries
     * ({@link #latestEpochs}).
     */
    public long[] batches(String query) throws EventsException {
        TreeSet<Long> found = new TreeSet<>();
        for (String name : list(base + "/" + safeName(query), false)) {
            String[] parts = name.endsWith(".json") ? name.substring(0, name.length() - 5).split("\\.", -1)
                    : new String[0];
            boolean epoch = parts.length == 1 || parts.length == 2 && !parts[1].startsWith("0") && digits(parts[1]);
            if (epoch && digits(parts[0])) {
                BigInteger batch = new BigInteger(parts[0]);
                found.add(batch.bitLength() > 63 ? Long.MAX_VALUE : batch.longValue());
            }
        }
        return found.stream().mapToLong(Long::longValue).toArray();
    }

    private static boolean digits(String text) {
        return !text.isEmpty() && text.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    /**
     * Per batch of a query's entries (ascending), the highest epoch listed:
     * the files named {@code <batch, 20 ASCII digits>.json} (epoch 0) and
     * {@code <batch, 20 ASCII digits>.<epoch>.json} (epoch in decimal without
     * a leading zero, 1 or more), batch and epoch within the long range.
     * Other names are not entries and never read ({@code *.tmp} among them).
     */
    NavigableMap<Long, Long> latestEpochs(String query) throws EventsException {
        TreeMap<Long, Long> found = new TreeMap<>();
        for (String name : list(base + "/" + safeName(query), false)) {
            long[] key = entryKey(name);
            if (key != null) {
                found.merge(key[0], key[1], Math::max);
            }
        }
        return found;
    }

    /**
     * {batch, epoch} of an entry's file name ({@code <batch, 20 ASCII
     * digits>.json} or {@code <batch>.<epoch, no leading zero>.json}, both
     * within 2^63 - 1: COMMIT_LOG.md, "Entries"); null for any other name.
     */
    static long[] entryKey(String name) {
        long batch = name.length() < 25 ? -1 : numbered(name.substring(0, 20) + ".json", ".json");
        long epoch = batch < 0 ? -1 : epochNamed(name.substring(20));
        return epoch < 0 ? null : new long[] {batch, epoch};
    }

    /** The epoch an entry name's part after its batch names: ".json" 0, ".<e>.json" e; else -1. */
    private static long epochNamed(String tail) {
        if (tail.equals(".json")) {
            return 0;
        }
        if (!tail.startsWith(".") || !tail.endsWith(".json") || tail.length() < 7 || tail.charAt(1) == '0'
                || !tail.chars().skip(1).limit(tail.length() - 6).allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        try {
            return Long.parseLong(tail.substring(1, tail.length() - 5));
        } catch (NumberFormatException beyondLong) {
            return -1;
        }
    }

    /**
     * The number of a file named {@code <20 ASCII digits><suffix>}, as the
     * log names entries, checkpoints and segments; -1 for any other name or a
     * number past 2^63 - 1 (no writer reaches it).
     */
    static long numbered(String name, String suffix) {
        if (name.length() != 20 + suffix.length() || !name.endsWith(suffix)
                || !name.chars().limit(20).allMatch(c -> c >= '0' && c <= '9')) {
            return -1;
        }
        try {
            return Long.parseLong(name.substring(0, 20));
        } catch (NumberFormatException beyondLong) {
            return -1;
        }
    }

    /**
     * The queries that have a folder in the log, in code point order; the
     * log's own folders ({@link #OWN_FOLDERS}) are left out (a writer named
     * from "_" before those existed keeps its folder).
     */
    public List<String> queries() throws CommitLogException {
        List<String> names = list(base, true);
        names.removeAll(OWN_FOLDERS);
        names.sort(CodePoints::compare);
        return names;
    }

    /** The log's id (LOG_ID, ASCII, surrounding whitespace stripped), or null if it has none. */
    public String logId() throws CommitLogException {
        String id = logId;
        if (id == null) {
            byte[] raw = readFile(base + "/" + LOG_ID_FILE, "commit log id");
            if (raw == null || raw.length == 0) {
                return null;
            }
            StringBuilder text = new StringBuilder(raw.length);
            for (byte b : raw) {
                text.append(b >= 0 ? (char) b : '\uFFFD');
            }
            id = logId = text.toString().strip();
        }
        return id;
    }

    /**
     * The journal's Arrow schema (schema.arrow), or null if there is none;
     * CommitLogException (*damaged*, COMMIT_LOG.md) for any bytes that are not
     * an Arrow schema message.
     */
    public Schema readSchema() throws CommitLogException {
        String path = base + "/" + SCHEMA_FILE;
        byte[] raw = readFile(path, "commit log schema");
        if (raw == null) {
            return null;
        }
        try {
            IpcMessage message = IpcMessage.read(ByteBuffer.wrap(raw), 0);
            if (message.headerType() != MessageHeader.Schema) {
                throw new EventsBodyException("Expected schema message, got " + message.typeName());
            }
            return MessageSerializer.deserializeSchema(message.message());
        } catch (EventsBodyException | RuntimeException broken) {
            throw new CommitLogException(path + " is not an Arrow schema (" + broken.getMessage()
                    + "); restore it or remove it to adopt the next batch's schema", broken);
        }
    }

    /** The bytes of {@code path}, or null if it does not exist; {@code what} names it in errors. */
    byte[] readFile(String path, String what) throws CommitLogException {
        try {
            return Files.readAllBytes(Paths.get(path));
        } catch (NoSuchFileException absent) {
            return null;
        } catch (IOException error) {
            throw new CommitLogException("cannot read " + what + " " + path + ": " + error, error);
        }
    }

    /** Names in {@code folder} (none if it does not exist); only folders if {@code folders}. */
    List<String> list(String folder, boolean folders) throws CommitLogException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(Paths.get(folder))) {
            for (Path entry : entries) {
                if (folders ? Files.isDirectory(entry) : Files.exists(entry)) {
                    names.add(entry.getFileName().toString());
                }
            }
        } catch (NoSuchFileException absent) {
            return names;
        } catch (IOException error) {
            throw new CommitLogException("cannot list commit log " + uri + ": " + error, error);
        }
        return names;
    }


    @Override
    public String toString() {
        return "commit log " + uri + " (" + base + ")";
    }
}
