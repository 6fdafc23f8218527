package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The records of one lane as one read-only load saw them (FORMAT.md,
 * "Reading: where data ends"). tests/test_jvm_journal_agreement.py holds it
 * and the Python reader to the same records, prepared transactions, report and
 * errors.
 *
 * <p>{@link #read} changes nothing on disk. It fails with
 * CorruptJournalException for damage (unless {@code recover}, which reports it
 * instead), FormatVersionException for a data file or control file of a newer
 * format, PathOutsideException for a {@code large/} folder leading out of the
 * lane, JournalException for a lane that is not a folder.
 *
 * <p>Concurrency: like every reader (FORMAT.md) it holds the lane's file-set lock
 * shared ({@link FileSetLock}) from before it lists the lane's files until it
 * is closed, so a compaction's swap or a writer's reclaim does not replace the
 * files it mapped; a writer appending beside it takes no lock, and what it
 * appends is seen or is past the end of data. A snapshot that is never closed
 * keeps the lock until its JVM exits: compactions of the lane then give up
 * after their bounded wait, and reclaims are put off.
 */
public final class LaneSnapshot implements AutoCloseable {

    private final Path lane;
    private final LaneLoader.Loaded loaded;
    private final Map<Long, LoadedFile> byId = new HashMap<>();
    private final LargeBodies large;
    private final boolean checksum;
    private final FileSetLock fileSet;

    private LaneSnapshot(Path lane, LaneLoader.Loaded loaded, boolean checksum, FileSetLock fileSet) {
        this.lane = lane;
        this.fileSet = fileSet;
        this.loaded = loaded;
        this.checksum = checksum;
        this.large = new LargeBodies(lane);
        for (LoadedFile file : loaded.files()) {
            byId.put(file.fileId(), file);
        }
    }

    /**
     * Loads the lane at {@code lane}. {@code checksum}: check every record's
     * CRC-32C at load and every large body's when read (the read option
     * {@code checksum}, default true); {@code recover}: report damaged files
     * and what was lost with them instead of failing (they stay in place).
     */
    public static LaneSnapshot read(Path lane, boolean checksum, boolean recover)
            throws IOException {
        if (!Files.isDirectory(lane)) {
            throw new JournalException("no journal at " + lane + ": the folder does not exist");
        }
        FileSetLock fileSet = FileSetLock.holdForReading(lane);
        try {
            LaneSnapshot snapshot = new LaneSnapshot(lane, LaneLoader.load(lane, checksum, recover),
                    checksum, fileSet);
            snapshot.large.checkInside();
            return snapshot;
        } catch (IOException | RuntimeException failed) {
            fileSet.close();
            throw failed;
        }
    }

    /** {@code read(lane, true, false)}. */
    public static LaneSnapshot read(Path lane) throws IOException {
        return read(lane, true, false);
    }

    /** Live committed records, in the order they were first added. */
    public List<LiveRecord> records() {
        List<LiveRecord> out = new ArrayList<>(loaded.state().live.size());
        loaded.state().live.forEach((id, version) -> out.add(record(id, version)));
        return out;
    }

    /** How many records are live. */
    public int size() {
        return loaded.state().live.size();
    }

    /** The live record {@code recordId}, or null. */
    public LiveRecord get(long recordId) {
        Version version = loaded.state().live.get(recordId);
        return version == null ? null : record(recordId, version);
    }

    /** Prepared transactions with no outcome yet, in the order they began. */
    public List<PreparedTx> prepared() {
        List<PreparedTx> out = new ArrayList<>();
        for (ReplayState.Tx tx : loaded.state().txs.values()) {
            if (tx.prepared) {
                List<Long> ids = new ArrayList<>();
                List<LiveRecord> records = new ArrayList<>();
                for (int i = 0; i < tx.records.size(); i++) {
                    ids.add(tx.records.get(i)[1]);
                    Version version = tx.versions.get(i);
                    if (version != null) {
                        records.add(record(tx.records.get(i)[1], version));
                    }
                }
                out.add(new PreparedTx(tx.txId, tx.xid, ids, records));
            }
        }
        return out;
    }

    /**
     * {tx id: its record ids} of transactions with records on disk but no
     * PREPARE, COMMIT or ROLLBACK: still being written, or left by a writer
     * that died (its next writer rolls them back). In the order they began.
     */
    public Map<Long, List<Long>> openTransactions() {
        Map<Long, List<Long>> out = new LinkedHashMap<>();
        for (ReplayState.Tx tx : loaded.state().txs.values()) {
            if (!tx.prepared) {
                List<Long> ids = new ArrayList<>();
                tx.records.forEach(record -> ids.add(record[1]));
                out.put(tx.txId, Collections.unmodifiableList(ids));
            }
        }
        return out;
    }

    /** The highest record id the lane ever handed out: in any record scanned or any header's
     *  watermark (u64, read unsigned). Streaming readers use record ids as offsets. */
    public long maxRecordId() {
        return loaded.state().maxRecordId;
    }

    /** The highest tx id the lane ever handed out, likewise. */
    public long maxTxId() {
        return loaded.state().maxTxId;
    }

    /** What the load noticed. */
    public LoadReport report() {
        return loaded.report();
    }

    /** The data files loaded, in file id order (damaged ones left out under recovery). */
    public List<LoadedFile> files() {
        return Collections.unmodifiableList(loaded.files());
    }

    /** A committed compaction whose swap is not finished (its new files were read), or null. */
    public ControlFile pendingSwap() {
        return loaded.pendingSwap();
    }

    /**
     * The number of the lane's last compaction swap (FORMAT.md, "Compaction"):
     * a pending swap's generation, else files.gen
     * now (0 when absent, -1 when it is not a number).
     */
    public long generation() throws IOException {
        if (loaded.pendingSwap() != null) {
            return loaded.pendingSwap().generation();
        }
        try {
            String text = new String(Files.readAllBytes(lane.resolve("files.gen")),
                    StandardCharsets.ISO_8859_1).strip();
            return !text.isEmpty() && text.chars().allMatch(c -> c >= '0' && c <= '9')
                    ? Long.parseLong(text) : -1;
        } catch (NoSuchFileException absent) {
            return 0;
        }
    }

    /** The lane's large bodies. */
    public LargeBodies largeBodies() {
        return large;
    }

    /** The lane, as given. */
    public Path lane() {
        return lane;
    }

    /** Drops the snapshot's references to its mapped files (the JVM unmaps them when they
     *  are no longer reachable; bodies handed out stay valid until then) and lets go of
     *  its hold on the file-set lock: from here a swap may replace what they map.
     *  Idempotent. */
    @Override
    public void close() {
        byId.clear();
        try {
            fileSet.close();
        } catch (IOException failed) {
            throw new java.io.UncheckedIOException("releasing " + lane.resolve(FileSetLock.NAME), failed);
        }
    }

    private LiveRecord record(long recordId, Version version) {
        LoadedFile file = byId.get(version.fileId());
        if (file == null) {
            throw new IllegalStateException("the snapshot is closed");
        }
        return new LiveRecord(recordId, version, file.bytes(), large, checksum);
    }
}
