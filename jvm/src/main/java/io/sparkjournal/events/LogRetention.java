package io.sparkjournal.events;

import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.DiskModes;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;

/**
 * A commit log's retention (COMMIT_LOG.md, "Retention"); the caller holds the checkpoint
 * lock ({@link LogMaintenance}). With the checkpoints listed newest first:
 *
 * <ul>
 *   <li>fewer than two: only stale {@code *.tmp} files are deleted;</li>
 *   <li>the second newest damaged: a warning, and only stale {@code *.tmp}
 *       files (the next checkpoint's retention goes on); of a newer format:
 *       a {@link FormatVersionException};</li>
 *   <li>else, per query the second newest knows, the entries (every epoch) of
 *       each batch at or below its {@code through}, not among the newest
 *       {@code retainBatches} batches listed (a {@code batch-write-*} query's
 *       are not protected by the count; 0 protects none), every entry file of
 *       the batch last modified more than {@code retainNanos} ago; their
 *       commit times are checked first and written from the entries where
 *       missing; then a {@code batch-write-*} folder left empty, the
 *       checkpoints older than the two newest, stale {@code *.tmp} files
 *       (older than an hour, in the log's folder, {@code _checkpoints/},
 *       each query folder and each {@code _times/} folder).</li>
 * </ul>
 *
 * Entry names are read as COMMIT_LOG.md, "Entries", names them (ASCII
 * digits, any number of them; an epoch without a leading zero). Entries are
 * deleted in batch order, 16 at a time, the folder synced after each group.
 *
 * <p>Crash behaviour: killed while deleting, some covered entries are gone and
 * some not; every reader's view is the same either way (the checkpoint covers
 * them, their commit times were written first), and the next retention
 * finishes the job.
 */
final class LogRetention {

    /** What {@link #expire} deleted. */
    record Deleted(int entries, int checkpoints, int tmp) {
    }

    static final long TMP_AGE_NANOS = TimeUnit.HOURS.toNanos(1);
    private static final String ONE_SHOT = "batch-write-";
    private static final int GROUP = 16;
    private static final Logger LOG = Logger.getLogger("sparkjournal.commitlog");

    private LogRetention() {
    }

    /** Retention (see the class) at {@code nowNanos} (ns since the epoch). */
    static Deleted expire(CommitLog log, long retainBatches, long retainNanos, long nowNanos)
            throws EventsException, FormatVersionException {
        long[] seqs = Checkpoints.list(log);
        List<Path> tmp = staleTmp(log, nowNanos);
        if (seqs.length < 2) {
            delete(tmp);
            return new Deleted(0, 0, tmp.size());
        }
        String where = Checkpoints.path(log, seqs[1]);
        LogCheckpoint previous;
        try {
            byte[] raw = log.readFile(where, "commit log checkpoint");
            previous = LogCheckpoint.parse(raw == null ? new byte[0] : raw, where, seqs[1]);
        } catch (CommitLogException damage) {
            LOG.warning(damage.getMessage() + ": retention waits for the next checkpoint");
            delete(tmp);
            return new Deleted(0, 0, tmp.size());
        }
        long young = nowNanos - retainNanos;
        int entries = 0;
        for (String query : log.queries()) {
            LogCheckpoint.Query known = previous.query(query);
            if (known == null) {
                continue;
            }
            Path folder = Paths.get(log.base(), query);
            TreeMap<Long, List<Path>> found = entryFiles(log, folder);
            boolean oneShot = query.startsWith(ONE_SHOT);
            Set<Long> kept = new HashSet<>();
            if (!oneShot && retainBatches > 0) {
                kept.addAll(found.descendingKeySet().stream().limit(retainBatches).toList());
            }
            TreeMap<Long, List<Path>> old = new TreeMap<>();
            for (Map.Entry<Long, List<Path>> batch : found.headMap(known.through(), true).entrySet()) {
                if (!kept.contains(batch.getKey()) && modifiedBefore(batch.getValue(), young)) {
                    old.put(batch.getKey(), batch.getValue());
                }
            }
            ensureTimes(log, query, old);
            List<Path> paths = new ArrayList<>();
            old.values().forEach(paths::addAll);
            for (int start = 0; start < paths.size(); start += GROUP) {
                delete(paths.subList(start, Math.min(paths.size(), start + GROUP)));
            }
            entries += paths.size();
            if (oneShot && old.size() == found.size()) {
                try {
                    Files.deleteIfExists(folder);
                } catch (IOException notEmpty) {
                    // a new entry raced in: the folder stays (only an empty one is deleted)
                }
            }
        }
        List<Path> older = new ArrayList<>();
        for (int i = 2; i < seqs.length; i++) {
            older.add(Paths.get(Checkpoints.path(log, seqs[i])));
        }
        delete(older);
        delete(tmp);
        return new Deleted(entries, older.size(), tmp.size());
    }

    /**
     * Before retention deletes {@code old} (batch: its entry files), every
     * one's commit time is in the segments: those missing (a segment written
     * by a writer that lost a race, or restored from an older copy) are
     * written from the latest entry of the batch, which still exists.
     */
    private static void ensureTimes(CommitLog log, String query, TreeMap<Long, List<Path>> old)
            throws EventsException, FormatVersionException {
        CommitTimes times = new CommitTimes(log.base());           // uncached: what is on disk now
        Map<Long, Long> missing = new TreeMap<>();
        for (Map.Entry<Long, List<Path>> batch : old.entrySet()) {
            if (times.committedAtMs(query, batch.getKey()) != null) {
                continue;
            }
            long epoch = 0;
            for (Path path : batch.getValue()) {
                epoch = Math.max(epoch, CommitLog.entryKey(path.getFileName().toString())[1]);
            }
            Decision decision = log.entry(query, batch.getKey(), epoch);
            if (decision != null && !decision.aborted()) {
                missing.put(batch.getKey(), decision.committedAtMs());
            }
        }
        if (!missing.isEmpty()) {
            LOG.warning("commit log " + log.uri() + ": " + missing.size() + " commit times of " + query
                    + " were not in their segments; written from the entries before retention deletes them");
            log.times().extend(query, missing);
        }
    }

    /** The entry files of a query folder by batch (COMMIT_LOG.md, "Entries"). */
    private static TreeMap<Long, List<Path>> entryFiles(CommitLog log, Path folder) throws CommitLogException {
        TreeMap<Long, List<Path>> found = new TreeMap<>();
        for (String name : log.list(folder.toString(), false)) {
            long[] key = CommitLog.entryKey(name);
            if (key != null) {
                found.computeIfAbsent(key[0], b -> new ArrayList<>()).add(folder.resolve(name));
            }
        }
        return found;
    }

    /** Whether every file was last modified before {@code youngNanos}; a file gone counts as not. */
    private static boolean modifiedBefore(List<Path> files, long youngNanos) {
        for (Path file : files) {
            try {
                if (Files.getLastModifiedTime(file).to(TimeUnit.NANOSECONDS) >= youngNanos) {
                    return false;
                }
            } catch (IOException gone) {
                return false;
            }
        }
        return true;
    }

    private static List<Path> staleTmp(CommitLog log, long nowNanos) throws CommitLogException {
        List<String> folders = new ArrayList<>(List.of(log.base() + "/" + Checkpoints.FOLDER, log.base()));
        for (String query : log.queries()) {
            folders.add(log.base() + "/" + query);
        }
        String times = log.base() + "/" + CommitTimes.FOLDER;
        for (String query : log.list(times, true)) {
            folders.add(times + "/" + query);
        }
        List<Path> found = new ArrayList<>();
        for (String folder : folders) {
            for (String name : log.list(folder, false)) {
                Path path = Paths.get(folder, name);
                if (name.endsWith(".tmp") && modifiedBefore(List.of(path), nowNanos - TMP_AGE_NANOS)) {
                    found.add(path);
                }
            }
        }
        return found;
    }

    /** Deletes {@code paths} (gone already is fine), then syncs their folders once. */
    private static void delete(List<Path> paths) throws CommitLogException {
        Set<Path> folders = new HashSet<>();
        for (Path path : paths) {
            try {
                Files.deleteIfExists(path);
                folders.add(path.getParent());
            } catch (NoSuchFileException gone) {
                // retention elsewhere took it first
            } catch (IOException error) {
                throw new CommitLogException("cannot delete commit log file " + path + ": " + error, error);
            }
        }
        for (Path folder : folders) {
            try {
                DiskModes.syncFolder(folder);
            } catch (IOException error) {
                throw new CommitLogException("cannot sync commit log folder " + folder + ": " + error, error);
            }
        }
    }
}
