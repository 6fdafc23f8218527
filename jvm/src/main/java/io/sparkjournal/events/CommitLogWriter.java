package io.sparkjournal.events;

import io.sparkjournal.journal.Shown;
import io.sparkjournal.format.Constants;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.DiskModes;
import io.sparkjournal.journal.CanonicalJson;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The writing side of a local commit log (COMMIT_LOG.md): entries ({@link #record}), the
 * {@code LOG_ID} ({@link #logId}) and {@code schema.arrow} ({@link #writeSchema}).
 *
 * <p>Contract: an entry is created exclusively and durably: its JSON (JSON.md's
 * canonical form, {@code epoch} and {@code aborted} only where not their
 * default; COMMIT_LOG.md, "Entries") is written
 * to a temporary file beside it and synced, the temporary file is hard-linked
 * to the entry's name (the link fails if the name exists) and removed, and the
 * folder synced. A name already taken is a {@link BatchTakenException} saying
 * who took it and what to do. Folders and files are made with the modes
 * {@link DiskModes#forPath} gives them: the journal's dirMode and fileMode for
 * a log under a root its writer registered, else the defaults.
 *
 * <p>Crash behaviour: killed before the link, no entry exists (a
 * {@code *.tmp} file may be left; retention removes it); after the link, the
 * entry exists whole. LOG_ID is created the same way (the first of racing
 * creators wins; everyone reads the winner's id). {@code schema.arrow} is
 * replaced atomically (temporary file, sync, rename, folder sync).
 */
public final class CommitLogWriter {

    private static final DateTimeFormatter WHEN =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);
    private final CommitLog log;

    /** A commit log's name was taken by another writer (COMMIT_LOG.md, "Entries": the batch fails;
     *  BatchAbortedError on the Python side). */
    public static final class BatchTakenException extends CommitLogException {
        private static final long serialVersionUID = 1L;

        BatchTakenException(String message) {
            super(message);
        }
    }

    public CommitLogWriter(CommitLog log) {
        this.log = log;
    }

    /**
     * Creates the entry of {@code epoch} of the batch naming {@code txs} (each
     * the {@code TaskMessage.decided()} fields of a task's message), or an abort
     * entry if {@code aborted}; the decision written. A query starting with
     * {@code _} is refused (the log's own folders).
     */
    public Decision record(String query, long batch, List<Map<String, Object>> txs, long epoch,
                           boolean aborted) throws EventsException, FormatVersionException {
        if (query.startsWith("_")) {
            throw new EventsException("query id " + Shown.text(query) + " starts with '_', which "
                    + "names the commit log's own folders: choose another txnAppId");
        }
        long now = System.currentTimeMillis();
        byte[] json = json(query, batch, now, txs, epoch, aborted);
        String path = log.entryPath(query, batch, epoch);
        boolean created;
        try {
            created = createExclusive(Paths.get(path), json);
        } catch (LinkedNotSynced linked) {
            throw new CommitLogException("commit log entry " + path + " was created, but its folder "
                    + "could not be synced (" + linked.getCause() + "): the batch is "
                    + (aborted ? "aborted unless" : "committed unless") + " the host loses power before the "
                    + "folder reaches the disk. Do not run the write again; check the disk", linked);
        } catch (IOException error) {
            throw new CommitLogException("cannot write commit log file " + path + ": " + error
                    + (aborted ? ". The batch was not aborted; fix the commit log location and retry"
                    : ". The batch was not committed (its prepared data stays invisible); fix the "
                    + "commit log location and restart the query"), error);
        }
        if (!created) {
            throw new BatchTakenException(taken(query, batch, epoch, aborted));
        }
        return Decision.fromJson(json, path);
    }

    /** The entry's bytes (COMMIT_LOG.md, "Entries"), in the canonical form of JSON.md. */
    public static byte[] json(String query, long batch, long committedAtMs,
                              List<Map<String, Object>> txs, long epoch, boolean aborted) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put(Constants.CommitEntry.FORMAT, Decision.FORMAT);
        data.put(Constants.CommitEntry.QUERY, query);
        data.put(Constants.CommitEntry.BATCH, batch);
        data.put(Constants.CommitEntry.COMMITTED_AT_MS, committedAtMs);
        data.put(Constants.CommitEntry.TXS, new ArrayList<>(txs));
        if (epoch != 0) {
            data.put(Constants.CommitEntry.EPOCH, epoch);
        }
        if (aborted) {
            data.put(Constants.CommitEntry.ABORTED, true);
        }
        return CanonicalJson.bytes(data);
    }

    /** Who took the name, and what to do (COMMIT_LOG.md, "Entries": created exclusively). */
    private String taken(String query, long batch, long epoch, boolean aborting)
            throws EventsException, FormatVersionException {
        Decision other = log.entry(query, batch, epoch);
        String when = other == null ? "just now" : WHEN.format(Instant.ofEpochMilli(other.committedAtMs()));
        if (aborting) {
            boolean wasAbort = other != null && other.aborted();
            return "batch " + batch + " of query " + query + " (epoch " + epoch + ") was "
                    + (wasAbort ? "aborted at " : "committed at ") + when + " before this abort: "
                    + (wasAbort ? "nothing to do" : "a committed batch cannot be aborted");
        }
        if (other != null && other.aborted()) {
            return "batch " + batch + " of query " + query + " was aborted by an operator (sparkjournal "
                    + "abort) at " + when + " before its driver committed it: this run's data of the "
                    + "batch stays invisible. Restart the query: Spark replays the batch and the "
                    + "sink writes it again (epoch " + (epoch + 1) + ")";
        }
        return "batch " + batch + " of query " + query + " (epoch " + epoch + ") was decided by "
                + "another writer at " + when + ": two drivers run this query (or txnAppId) at once; "
                + "stop one";
    }

    /** The log's LOG_ID, created first (exclusively, durably) when it has none. */
    public String logId() throws EventsException {
        String found = log.logId();
        if (found != null) {
            return found;
        }
        String made = UUID.randomUUID().toString().replace("-", "");
        Path path = Paths.get(log.base(), CommitLog.LOG_ID_FILE);
        try {
            createExclusive(path, made.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        } catch (IOException error) {
            throw new CommitLogException("cannot write commit log file " + path + ": " + error, error);
        }
        found = log.logId();
        if (found == null) {
            throw new CommitLogException("commit log id " + path + " is empty after it was created");
        }
        return found;
    }

    /** Replaces schema.arrow with {@code schema} (one Arrow IPC schema message). */
    public void writeSchema(Schema schema) throws EventsException {
        Path path = Paths.get(log.base(), CommitLog.SCHEMA_FILE);
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            MessageSerializer.serialize(new WriteChannel(Channels.newChannel(bytes)), schema);
            replace(path, bytes.toByteArray());
        } catch (IOException error) {
            throw new CommitLogException("cannot write commit log file " + path + ": " + error, error);
        }
    }

    /**
     * Replaces {@code path} (its folders made) with {@code data} atomically
     * and durably, as COMMIT_LOG.md writes every file of a local log: a synced
     * temporary file ({@code *.tmp}) renamed over it, then the folder synced.
     */
    static void replace(Path path, byte[] data) throws IOException {
        Path tmp = temporary(path);
        write(tmp, data);
        Files.move(tmp, path, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        DiskModes.syncFolder(path.getParent());
    }

    /**
     * Creates {@code path} holding {@code data} unless it exists: false if
     * another writer's file is there. A synced temporary file linked to the
     * name, then the folder synced.
     */
    static boolean createExclusive(Path path, byte[] data) throws IOException {
        Path tmp = temporary(path);
        write(tmp, data);
        try {
            Files.createLink(path, tmp);
        } catch (FileAlreadyExistsException taken) {
            return false;
        } finally {
            Files.deleteIfExists(tmp);
        }
        try {
            DiskModes.syncFolder(path.getParent());
        } catch (IOException unsynced) {
            throw new LinkedNotSynced(unsynced);
        }
        return true;
    }

    /** The entry is linked (decided, as every reader sees it) but its folder's sync failed. */
    static final class LinkedNotSynced extends IOException {
        private static final long serialVersionUID = 1L;

        LinkedNotSynced(IOException cause) {
            super(cause);
        }
    }

    private static Path temporary(Path path) throws IOException {
        DiskModes.makeDirs(path.getParent());
        return path.resolveSibling(path.getFileName() + "." + UUID.randomUUID().toString()
                .replace("-", "") + ".tmp");
    }

    private static void write(Path tmp, byte[] data) throws IOException {
        try (FileChannel channel = FileChannel.open(tmp, java.util.Set.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE), DiskModes.fileAttribute(tmp))) {
            ByteBuffer buffer = ByteBuffer.wrap(data);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
    }
}
