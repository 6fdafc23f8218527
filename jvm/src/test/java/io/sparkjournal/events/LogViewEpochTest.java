package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;
import static io.sparkjournal.events.LogViewTest.N1;
import static io.sparkjournal.events.LogViewTest.checkpoint;

import io.sparkjournal.TempFolder;
import io.sparkjournal.events.LogFiles.Tx;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Abort entries and later epochs of a batch (COMMIT_LOG.md, "Entries",
 * "Outcome of a prepared transaction"): the view keeps each batch's latest
 * entry, outcomes follow the epoch an XID carries, and "done", the last
 * committed batch and the write epoch count commit entries only.
 */
public final class LogViewEpochTest {

    private static final String LANE = "lane-000";

    private LogViewEpochTest() {
    }

    public static void testAnAbortEntryAbortsItsEpochAndLeavesTheBatchNotDone() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);
            LogFiles.entry(base, "q", 5, 500, new Tx(N1, LANE, 6));
            LogFiles.abort(base, "q", 6, 0, 600);
            CommitLog log = new CommitLog(base.toString());
            LogView view = log.view();
            TxRef seven = new TxRef(N1, LANE, 7);
            equal(Outcome.ABORTED, view.outcome("q", 6, seven, 0), "rule 1: the abort entry of its epoch");
            equal(Outcome.ABORTED, outcome(base, "q", 6, 0, seven), "the same through its XID");
            equal(Outcome.UNDECIDED, view.outcome("q", 6, seven, 1), "epoch 1 is not decided yet");
            isTrue(!view.done("q", 6), "an aborted batch is not done");
            isTrue(!log.hasEntry("q", 6), "it has no commit entry");
            equal(5L, view.lastCommitted("q"), "an abort entry is not a committed batch");
            equal(1L, view.writeEpoch("q", 6), "written again at epoch 1");
            equal(null, view.committedAtMs("q", 6), "no event of it is committed");
            equal(6L, CommittedLane.of(view).get(new CommittedLane.Key(N1, LANE)).batches(),
                    "an abort entry commits nothing to a lane");
        }
    }

    public static void testALaterEpochsCommitEntryCommitsItsTxsAndTheBatchIsDone() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);
            LogFiles.abort(base, "q", 5, 0, 500);
            LogFiles.abort(base, "q", 5, 1, 510);
            LogFiles.commitAt(base, "q", 5, 2, 520, new Tx(N1, LANE, 9));
            CommitLog log = new CommitLog(base.toString());
            LogView view = log.view();
            equal(2L, view.entry("q", 5).epoch(), "the latest entry is in the view");
            equal(Outcome.COMMITTED, view.outcome("q", 5, new TxRef(N1, LANE, 9), 2), "rule 1: named");
            equal(Outcome.COMMITTED, outcome(base, "q", 5, 2, new TxRef(N1, LANE, 9)), "through its XID");
            equal(Outcome.ABORTED, view.outcome("q", 5, new TxRef(N1, LANE, 10), 2), "rule 1: not named");
            equal(Outcome.ABORTED, view.outcome("q", 5, new TxRef(N1, LANE, 6), 0), "rule 2: epoch 0");
            equal(Outcome.ABORTED, view.outcome("q", 5, new TxRef(N1, LANE, 9), 1),
                    "rule 2: epoch 1, even for a tx id epoch 2 names");
            isTrue(view.done("q", 5) && log.hasEntry("q", 5), "done: its latest entry commits");
            equal(5L, view.lastCommitted("q"), "last committed");
            equal(520L, view.committedAtMs("q", 5), "the commit entry's time");
            equal(0L, view.writeEpoch("q", 5), "not an abort entry");
            equal(6L, CommittedLane.of(view).get(new CommittedLane.Key(N1, LANE)).batches(), "lane");
        }
    }

    public static void testTheWriteEpochIsOnePastTheLatestAbortEntry() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            CommitLog log = new CommitLog(base.toString());
            equal(0L, log.view().writeEpoch("q", 0), "a batch without entries");
            LogFiles.abort(base, "q", 0, 0, 100);
            LogView first = log.view();
            equal(1L, first.writeEpoch("q", 0), "after the abort of epoch 0");
            LogFiles.abort(base, "q", 0, 1, 110);
            LogView second = log.view();
            equal(2L, second.writeEpoch("q", 0), "after the abort of epoch 1: the new latest entry is read");
            equal(1L, first.writeEpoch("q", 0), "a view never changes");
            equal(0L, second.writeEpoch("q", 1), "another batch");
            LogFiles.commitAt(base, "q", 0, 2, 120, new Tx(N1, LANE, 3));
            LogView third = log.view();
            isTrue(third.done("q", 0) && third.writeEpoch("q", 0) == 0, "committed at epoch 2: done");
            isTrue(log.hasEntry("q", 0), "its commit entry is found past the abort entries");
        }
    }

    public static void testALaterCommitEntryAbortsAnEarlierUndecidedBatch() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.entry(base, "q", 0, 100, new Tx(N1, LANE, 1));
            CommitLog log = new CommitLog(base.toString());
            TxRef five = new TxRef(N1, LANE, 5);
            equal(Outcome.UNDECIDED, log.view().outcome("q", 1, five, 0), "rule 5: nothing later");
            LogFiles.abort(base, "q", 2, 0, 200);
            LogView aborted = log.view();
            equal(Outcome.UNDECIDED, aborted.outcome("q", 1, five, 0), "an abort entry of a later batch decides nothing");
            isTrue(!aborted.done("q", 1), "nor makes an earlier batch done");
            equal(0L, aborted.lastCommitted("q"), "last committed");
            LogFiles.commitAt(base, "q", 2, 1, 210, new Tx(N1, LANE, 6));
            LogView committed = log.view();
            equal(Outcome.ABORTED, committed.outcome("q", 1, five, 0), "rule 4: a later commit entry");
            equal(Outcome.ABORTED, committed.outcome("q", 1, five, 3), "rule 4 at any epoch");
            isTrue(committed.done("q", 1), "batch 1 is done");
            equal(2L, committed.lastCommitted("q"), "last committed");
        }
    }

    public static void testACheckpointCoveringAnAbortedBatchDecidesItsEpochsByItsRanges() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.abort(base, "q", 3, 0, 300);
            LogFiles.commitAt(base, "q", 3, 1, 310, new Tx(N1, LANE, 4));
            checkpoint(base, 0, 4);                                  // q: txs 1..5 of lane-000 committed
            LogFiles.abort(base, "q", 6, 0, 600);                    // above through: in the view
            LogView view = new CommitLog(base.toString()).view();
            equal(null, view.entry("q", 3), "folded: not in the view");
            equal(List.of(6L), List.copyOf(view.entries().get("q").keySet()), "the abort entry above it");
            equal(Outcome.COMMITTED, view.outcome("q", 3, new TxRef(N1, LANE, 4), 1), "rule 3: in a range");
            equal(Outcome.ABORTED, view.outcome("q", 3, new TxRef(N1, LANE, 40), 0), "rule 3: the aborted epoch");
            isTrue(view.done("q", 3) && !view.done("q", 6), "3 is folded, 6 aborted");
            equal(4L, view.lastCommitted("q"), "the checkpoint's through");
            equal(1L, view.writeEpoch("q", 6), "write epoch above through");
            equal(Outcome.ABORTED, view.outcome("q", 6, new TxRef(N1, LANE, 8), 0), "rule 1 above through");
        }
    }

    public static void testEntryNamesOfBothShapesAreReadAndOtherNamesNever() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.entry(base, "q", 1, 100, new Tx(N1, LANE, 1));
            LogFiles.abort(base, "q", 2, 0, 200);
            LogFiles.commitAt(base, "q", 2, 1, 210, new Tx(N1, LANE, 2));
            Path q = base.resolve("q");
            for (String junk : List.of("00000000000000000002.01.json", "00000000000000000002.0.json",
                    "00000000000000000002.2.json.tmp", "2.3.json", "00000000000000000002.x.json",
                    "00000000000000000002.-1.json", "00000000000000000003.json.tmp",
                    "00000000000000000004.1.2.json")) {
                Files.writeString(q.resolve(junk), "never read");
            }
            CommitLog log = new CommitLog(base.toString());
            LogView view = log.view();
            equal(List.of(1L, 2L), List.copyOf(view.entries().get("q").keySet()), "entries");
            equal(1L, view.entry("q", 2).epoch(), "batch 2's latest entry");
            equal(q.resolve("00000000000000000002.1.json").toString(), log.entryPath("q", 2, 1), "its path");
            equal(List.of(1L, 2L), List.of(log.batches("q")[0], log.batches("q")[1]), "the listing");
            equal(2, log.batches("q").length, "the listing's length");
        }
    }

    public static void testAnEntryHoldingAnotherEpochThanItsNameIsDamage() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.abort(base, "q", 2, 0, 200);
            Path wrong = LogFiles.commitAt(base, "q", 2, 2, 210, new Tx(N1, LANE, 2));
            Path named = wrong.resolveSibling("00000000000000000002.1.json");
            Files.move(wrong, named);
            String message = raises(CommitLogException.class, () -> new CommitLog(base.toString()).view())
                    .getMessage();
            contains(message, named.toString(), "batch 2 (epoch 2)", "restore");
        }
    }

    public static void testMalformedEpochOrAbortedIsADamagedEntry() throws Exception {
        String head = "{'format': 1, 'query': 'q', 'batch': 2, 'committed_at_ms': 5, ";
        String[] damaged = {
            "'txs': [], 'epoch': '1'}", "'txs': [], 'epoch': -1}", "'txs': [], 'epoch': 1.0}",
            "'txs': [], 'epoch': true}", "'txs': [], 'epoch': null}", "'txs': [], 'aborted': 1}",
            "'txs': [], 'aborted': 'true'}", "'txs': [], 'aborted': null}",
            "'txs': [{'node': 'n', 'lane': 'l', 'tx': 1}], 'aborted': true}",
        };
        for (String tail : damaged) {
            byte[] raw = (head + tail).replace('\'', '"').getBytes(StandardCharsets.UTF_8);
            contains(raises(CommitLogException.class, () -> Decision.fromJson(raw, "/log/q/2.json")).getMessage(),
                    "/log/q/2.json", "is unreadable", "do not delete it");
        }
        Decision abort = Decision.fromJson((head + "'txs': [], 'epoch': 3, 'aborted': true}").replace('\'', '"')
                .getBytes(StandardCharsets.UTF_8), "here");
        isTrue(abort.aborted() && abort.epoch() == 3, "an abort entry of epoch 3");
        Decision commit = Decision.fromJson((head + "'txs': [{'node': 'n', 'lane': 'l', 'tx': 1}], "
                + "'aborted': false}").replace('\'', '"').getBytes(StandardCharsets.UTF_8), "here");
        isTrue(!commit.aborted() && commit.epoch() == 0 && commit.commits(new TxRef("n", "l", 1)),
                "a commit entry of epoch 0 (the defaults)");
    }

    /** The outcome of {@code ref} whose PREPARE carries the XID of that epoch of the batch. */
    private static Outcome outcome(Path base, String query, long batch, long epoch, TxRef ref) throws Exception {
        return new Resolver().outcome(XidEncoder.encode(base.toString(), query, batch, 0, 0, 1, epoch, 0), ref);
    }
}
