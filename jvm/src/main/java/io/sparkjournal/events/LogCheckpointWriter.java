package io.sparkjournal.events;

import io.sparkjournal.format.FormatVersionException;
import java.io.IOException;
import java.nio.file.Paths;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * Creates a commit log's next checkpoint (COMMIT_LOG.md, "Checkpoints"); the
 * caller holds the
 * checkpoint lock ({@link LogMaintenance}).
 *
 * <p>Contract of {@link #checkpoint}: from the view now ({@link CommitLog#view}:
 * the newest readable checkpoint, every query folder listed, the latest entry
 * of each batch past its {@code through}), every entry is folded
 * ({@link CheckpointState}; an abort entry folds nothing); if nothing was
 * folded and the newest checkpoint is not older than the renewal time, nothing
 * is written. Else the commit times of the folded batches are written first
 * ({@link CommitTimes#extend}: a checkpoint never covers a batch whose time is
 * not on disk), then checkpoint {@code seq} = one more than the highest listed
 * (past a damaged newest one too: COMMIT_LOG.md, "Checkpoints") is created exclusively
 * ({@link CommitLogWriter#createExclusive}). A name found taken is another
 * writer's checkpoint, left in place: the spec's rule that two racing writers
 * are safe.
 *
 * <p>Crash behaviour: killed before the checkpoint is linked, only
 * commit-time segments were extended (never read for batches no checkpoint
 * covers) and a {@code *.tmp} file may be left (retention removes it after an
 * hour); after the link, the checkpoint exists whole.
 */
final class LogCheckpointWriter {

    /** What {@link #checkpoint} did: the file created (null: none) and the entries folded into it. */
    record Made(String name, int folded) {
    }

    private LogCheckpointWriter() {
    }

    /**
     * The next checkpoint (see the class), written at {@code nowMs};
     * {@code renewOlderThanMs}: a checkpoint is written even with nothing to
     * fold when the newest was written before it (so a log no writer adds to
     * still gets the second checkpoint retention needs); null: never.
     */
    static Made checkpoint(CommitLog log, long nowMs, Long renewOlderThanMs)
            throws EventsException, FormatVersionException {
        LogView view = log.view();
        LogCheckpoint base = view.checkpoint();
        CheckpointState state = new CheckpointState(base);
        Map<String, NavigableMap<Long, Long>> times = new TreeMap<>();
        int folded = 0;
        for (Map.Entry<String, NavigableMap<Long, Decision>> query : view.entries().entrySet()) {
            for (Decision decision : query.getValue().values()) {
                state.fold(decision);
                if (!decision.aborted()) {
                    times.computeIfAbsent(query.getKey(), q -> new TreeMap<>())
                            .put(decision.batch(), decision.committedAtMs());
                    folded++;
                }
            }
        }
        boolean stale = renewOlderThanMs != null && base.seq() >= 0 && base.writtenAtMs() < renewOlderThanMs;
        if (folded == 0 && !stale) {
            return new Made(null, 0);
        }
        for (Map.Entry<String, NavigableMap<Long, Long>> query : times.entrySet()) {
            log.times().extend(query.getKey(), query.getValue());      // before the checkpoint covering them
        }
        long seq = view.listedSeq() + 1;
        String path = Checkpoints.path(log, seq);
        try {
            if (!CommitLogWriter.createExclusive(Paths.get(path), state.json(seq, nowMs))) {
                return new Made(null, 0);                    // another writer's checkpoint stands
            }
        } catch (IOException error) {
            throw new CommitLogException("cannot write commit log checkpoint " + path + ": " + error, error);
        }
        return new Made(String.format("%020d.json", seq), folded);
    }
}
