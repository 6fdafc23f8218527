package io.sparkjournal.events;

import io.sparkjournal.format.FormatVersionException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.logging.Logger;

/**
 * The checkpoints of a commit log ({@code <log>/_checkpoints/<seq, 20
 * digits>.json}) and the reader's choice among them (COMMIT_LOG.md, "Reader
 * requirement"): the highest seq that parses and passes {@link LogCheckpoint}'s
 * checks, else the next lower one, else the empty state.
 *
 * <p>A damaged checkpoint is logged as a warning naming the file and passed
 * over, but only while what stands in for it is complete: retention after
 * checkpoint {@code s} deletes entries folded into {@code s - 1}, so the one
 * just below the newest present checkpoint (or the empty state when the
 * newest is seq 0) can stand in; anything older may lack entries, and then
 * the choice fails with a {@link CommitLogException} naming the damaged files
 * (and seq {@code newest - 1}'s when it is missing): restore them.
 * A newer format is a {@link FormatVersionException}, never passed over. A
 * file listed and gone before its read (retention) is skipped. Names that are
 * not 20 digits and ".json" ({@code *.tmp}) are never read.
 */
final class Checkpoints {

    static final String FOLDER = io.sparkjournal.format.Constants.Paths.CHECKPOINTS;
    private static final Logger LOG = Logger.getLogger("sparkjournal.log");

    private Checkpoints() {
    }

    /** The seqs of the checkpoint files in {@code log}, highest first. */
    static long[] list(CommitLog log) throws CommitLogException {
        return log.list(folder(log), false).stream().mapToLong(name -> CommitLog.numbered(name, ".json"))
                .filter(seq -> seq >= 0).boxed().sorted(Comparator.reverseOrder()).mapToLong(Long::longValue)
                .toArray();
    }

    /** The highest seq listed, or -1 when there is no checkpoint. */
    static long top(CommitLog log) throws CommitLogException {
        long[] seqs = list(log);
        return seqs.length == 0 ? -1 : seqs[0];
    }

    /** The newest readable of the checkpoints {@code seqs} (highest first); see the class. */
    static LogCheckpoint newestReadable(CommitLog log, long[] seqs)
            throws CommitLogException, FormatVersionException {
        long newest = -1;
        List<CommitLogException> damaged = new ArrayList<>();
        Set<Long> damagedSeqs = new HashSet<>();
        LogCheckpoint chosen = LogCheckpoint.NONE;
        for (long seq : seqs) {
            byte[] raw = log.readFile(path(log, seq), "commit log checkpoint");
            if (raw == null) {
                continue;
            }
            newest = Math.max(newest, seq);
            try {
                chosen = LogCheckpoint.parse(raw, path(log, seq), seq);
                break;
            } catch (CommitLogException damage) {       // a FormatVersionException is no damage: thrown
                damaged.add(damage);
                damagedSeqs.add(seq);
            }
        }
        if (chosen.seq() < newest - 1) {
            List<String> messages = new ArrayList<>();
            damaged.forEach(damage -> messages.add(damage.getMessage()));
            if (!damagedSeqs.contains(newest - 1)) {
                messages.add("checkpoint " + path(log, newest - 1) + " is missing");
            }
            throw new CommitLogException("commit log " + log.uri() + ": its newest checkpoint is damaged"
                    + " and the one before it is damaged or missing, so " + (chosen.seq() < 0 ? "its entries"
                    : chosen.toString()) + " cannot stand in (retention may have removed entries it needs):"
                    + " restore these files from a backup: " + String.join("; ", messages));
        }
        for (CommitLogException damage : damaged) {
            LOG.warning(damage.getMessage() + "; reading " + (chosen.seq() < 0 ? "every entry"
                    : "the log from " + chosen) + " meanwhile");
        }
        return chosen;
    }

    /** The file of checkpoint {@code seq}. */
    static String path(CommitLog log, long seq) {
        return folder(log) + "/" + String.format("%020d", seq) + ".json";
    }

    private static String folder(CommitLog log) {
        return log.base() + "/" + FOLDER;
    }
}
