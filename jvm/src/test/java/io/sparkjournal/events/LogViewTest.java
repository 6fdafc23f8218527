package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import io.sparkjournal.events.LogFiles.Tx;
import io.sparkjournal.format.FormatVersionException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * {@link LogView} as COMMIT_LOG.md defines it, on real files: a checkpoint plus
 * the entries after it, the fallback past a damaged checkpoint, gaps in batch
 * ids, batch-write queries, the outcome rules 1-5 at epoch 0, "done", reuse
 * and rebuild. Abort entries and later epochs: {@link LogViewEpochTest}.
 */
public final class LogViewTest {

    static final String N1 = "n1@h1";
    static final String N2 = "n2@h2";

    private LogViewTest() {
    }

    /** Checkpoint {@code seq} of query q through {@code through}: lane-000 of N1 committed txs 1..through+1. */
    static Path checkpoint(Path log, long seq, long through) throws Exception {
        return LogFiles.checkpoint(log, seq, "{'format': 1, 'seq': " + seq + ", 'written_at_ms': 1000, "
                + "'queries': [{'query': 'q', 'through': " + through + ", 'decided': " + (through + 1)
                + ", 'rows': 9, 'last_committed_at_ms': 900}], "
                + "'lanes': [{'node': '" + N1 + "', 'host': 'h1', 'root': '/data/j', 'lane': 'lane-000', "
                + "'batches': " + (through + 1) + ", 'rows': 9, 'committed': [[1, " + (through + 1) + "]]}], "
                + "'nodes': [{'node': '" + N1 + "', 'batches': " + (through + 1) + ", 'rows': 9}], "
                + "'unknown': 'ignored'}");
    }

    public static void testAViewIsTheCheckpointPlusTheEntriesAfterIt() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.entry(base, "q", 2, 200, new Tx(N1, "lane-000", 99));        // folded: not read
            checkpoint(base, 0, 4);
            LogFiles.entry(base, "q", 5, 500, new Tx(N1, "lane-000", 6), new Tx(N2, "lane-001", 1));
            LogFiles.entry(base, "q", 6, 600, new Tx(N1, "lane-000", 7), new Tx(N1, "lane-002", 1));
            LogView view = new CommitLog(base.toString()).view();
            equal(0L, view.checkpoint().seq(), "checkpoint");
            equal(null, view.entry("q", 2), "a folded entry is not in the view");
            equal(500L, view.entry("q", 5).committedAtMs(), "entry 5");
            equal(6L, view.lastCommitted("q"), "last committed");
            equal(List.of(5L, 6L), List.copyOf(view.entries().get("q").keySet()), "entries after");

            Map<CommittedLane.Key, CommittedLane> lanes = CommittedLane.of(view);
            CommittedLane first = lanes.get(new CommittedLane.Key(N1, "lane-000"));
            equal(7L, first.batches(), "lane-000: 5 folded + 2 after");
            equal("/data/j", first.root(), "root from the checkpoint");
            equal(7L, first.nodeBatches(), "N1: 5 folded + batches 5 and 6 once each");
            CommittedLane other = lanes.get(new CommittedLane.Key(N2, "lane-001"));
            equal(1L, other.batches(), "lane-001");
            equal("h2", other.host(), "host from the node id");
            equal(1L, other.nodeBatches(), "N2");
            equal(List.of(new CommittedLane.Key(N1, "lane-000"), new CommittedLane.Key(N2, "lane-001"),
                    new CommittedLane.Key(N1, "lane-002")), List.copyOf(lanes.keySet()), "lane order");
        }
    }

    public static void testADamagedNewestCheckpointFallsBackToThePreviousOne() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);
            LogFiles.checkpoint(base, 1, "{'format': 1, 'seq': 1, 'queries': [");
            LogFiles.entry(base, "q", 5, 500, new Tx(N1, "lane-000", 6));
            LogView view = new CommitLog(base.toString()).view();
            equal(0L, view.checkpoint().seq(), "the checkpoint before the damaged one");
            equal(500L, view.entry("q", 5).committedAtMs(), "entries after it");
        }
    }

    public static void testADamagedOnlyCheckpointZeroFallsBackToTheEntries() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.entry(base, "q", 0, 100, new Tx(N1, "lane-000", 1));
            LogFiles.checkpoint(base, 0, "{'format': 1, 'seq': 0, 'queries': [], 'lanes': [], "
                    + "'nodes': [], 'written_at_ms': 'soon'}");
            LogView view = new CommitLog(base.toString()).view();
            equal(-1L, view.checkpoint().seq(), "the empty state");
            equal(100L, view.entry("q", 0).committedAtMs(), "every entry");
        }
    }

    public static void testACheckpointNothingCanStandInForIsAnError() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 3, 4);
            Path damaged = LogFiles.checkpoint(base, 4, "not json");
            LogFiles.checkpoint(base, 5, "{'format': 1, 'seq': 5, 'queries': [], 'lanes': [], 'nodes': []}");
            // 5 lacks written_at_ms: damaged too, and 3 may lack entries retention after 5 removed
            String message = raises(CommitLogException.class, () -> new CommitLog(base.toString()).view())
                    .getMessage();
            contains(message, "cannot stand in", damaged.toString(), "restore");
        }
    }

    public static void testADamagedNewestCheckpointWhosePredecessorIsMissingIsAnError() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 2, 4);
            Path damaged = LogFiles.checkpoint(base, 4, "{'format': 1, 'seq': 3, 'written_at_ms': 1, "
                    + "'queries': [], 'lanes': [], 'nodes': []}");
            String message = raises(CommitLogException.class, () -> new CommitLog(base.toString()).view())
                    .getMessage();
            contains(message, damaged.toString(), "its seq is 3 but its file is named for seq 4",
                    "00000000000000000003.json is missing", "restore");
        }
    }

    public static void testACheckpointLaneWithoutItsRootIsDamagedAndTheOneBeforeStandsIn() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);
            LogFiles.checkpoint(base, 1, "{'format': 1, 'seq': 1, 'written_at_ms': 1, 'queries': [], "
                    + "'nodes': [], 'lanes': [{'node': 'n@h', 'host': 'h', 'lane': 'lane-000', 'batches': 1, "
                    + "'rows': 1, 'committed': [[1, 1]]}]}");
            equal(0L, new CommitLog(base.toString()).view().checkpoint().seq(), "seq 0 stands in");
        }
    }

    public static void testCheckpointChecksRefuseDamage() throws Exception {
        String[] damaged = {
            "{'format': 1, 'seq': 7, 'written_at_ms': 1, 'queries': [], 'lanes': [], 'nodes': []}",
            "{'format': 0, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'lanes': [], 'nodes': []}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [{'query': 'b', 'through': 1, "
                + "'decided': 2, 'rows': 0, 'last_committed_at_ms': 5}, {'query': 'a', 'through': 1, "
                + "'decided': 2, 'rows': 0, 'last_committed_at_ms': 5}], 'lanes': [], 'nodes': []}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'nodes': [], 'lanes': [{'node': "
                + "'n@h', 'host': 'h', 'root': '', 'lane': 'lane-000', 'batches': 1, 'rows': 1, "
                + "'committed': [[5, 9], [9, 12]]}]}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'nodes': [], 'lanes': [{'node': "
                + "'n@h', 'host': 'h', 'root': '', 'lane': 'lane-000', 'batches': 1, 'rows': 1, "
                + "'committed': [[9, 5]]}]}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [{'query': '..', 'through': 1, "
                + "'decided': 2, 'rows': 0, 'last_committed_at_ms': 5}], 'lanes': [], 'nodes': []}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [{'query': 'q', 'through': '1', "
                + "'decided': 2, 'rows': 0, 'last_committed_at_ms': 5}], 'lanes': [], 'nodes': []}",
            "{'format': 1.0, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'lanes': [], 'nodes': []}",
            "{'format': true, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'lanes': [], 'nodes': []}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'lanes': [], 'nodes': []} x",
            "{'format': 1, 'seq': 2, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'lanes': [], 'nodes': []}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'lanes': [], 'nodes': null}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'nodes': [], 'lanes': [{'node': "
                + "'n@h', 'host': 'h', 'lane': 'lane-000', 'batches': 1, 'rows': 1, 'committed': []}]}",
            "{'format': 1, 'seq': 2, 'written_at_ms': 1, 'queries': [], 'nodes': [], 'lanes': [{'node': "
                + "'n@h', 'root': '', 'lane': 'lane-000', 'batches': 1, 'rows': 1, 'committed': []}]}",
        };
        for (String text : damaged) {
            contains(raises(CommitLogException.class, () -> LogCheckpoint.parse(text.replace('\'', '"')
                    .getBytes(), "/log/_checkpoints/2.json", 2)).getMessage(), "/log/_checkpoints/2.json",
                    "is damaged");
        }
        LogCheckpoint adjacent = LogCheckpoint.parse(("{'format': 1, 'seq': 2, 'written_at_ms': 1, "
                + "'queries': [], 'nodes': [], 'lanes': [{'node': 'n@h', 'host': 'h', 'root': '', "
                + "'lane': 'lane-000', 'batches': 1, "
                + "'rows': 1, 'committed': [[5, 9], [10, 18446744073709551615]]}]}").replace('\'', '"')
                .getBytes(), "here", 2);
        LogCheckpoint.Lane lane = adjacent.lanes().get(new CommittedLane.Key("n@h", "lane-000"));
        equal("h", lane.host(), "host");
        equal("", lane.root(), "root");
        isTrue(adjacent.committed(new TxRef("n@h", "lane-000", -1L)), "tx 2^64 - 1 in [10, 2^64 - 1]");
        isTrue(!adjacent.committed(new TxRef("n@h", "lane-000", 4)), "tx 4 in no range");
    }

    public static void testACheckpointOfANewerFormatIsRefused() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);
            Path newer = LogFiles.checkpoint(base, 1, "{'format': 2, 'seq': 1, 'whatever': []}");
            FormatVersionException refused = raises(FormatVersionException.class,
                    () -> new CommitLog(base.toString()).view());
            equal(newer.toString(), refused.path(), "the refused file");
            equal(2L, refused.found(), "its format");
            contains(refused.getMessage(), "upgrade sparkjournal");
        }
    }

    public static void testAnEntryPastAGapIsInTheView() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);
            LogFiles.entry(base, "q", 5, 500, new Tx(N1, "lane-000", 6));
            LogFiles.entry(base, "q", 7, 700, new Tx(N1, "lane-000", 8));
            CommitLog log = new CommitLog(base.toString());
            LogView view = log.view();
            equal(List.of(5L, 7L), List.copyOf(view.entries().get("q").keySet()), "entries past the gap");
            equal(7L, view.lastCommitted("q"), "last committed");
            equal(700L, view.committedAtMs("q", 7), "its entry's time");
            equal(null, view.committedAtMs("q", 6), "batch 6 is not decided");
            equal(Outcome.COMMITTED, view.outcome("q", 7, new TxRef(N1, "lane-000", 8), 0), "rule 1: batch 7");
            equal(Outcome.ABORTED, view.outcome("q", 6, new TxRef(N1, "lane-000", 7), 0), "rule 4: batch 6");
            equal(Outcome.UNDECIDED, view.outcome("q", 8, new TxRef(N1, "lane-000", 9), 0), "rule 5: batch 8");
            isTrue(view.done("q", 6) && view.done("q", 7) && !view.done("q", 8), "done up to 7");

            LogFiles.entry(base, "q", 9, 900, new Tx(N1, "lane-000", 10));
            LogView later = log.view();
            isTrue(later.entry("q", 7) == view.entry("q", 7), "a decision read is reused, not read again");
            equal(900L, later.entry("q", 9).committedAtMs(), "the entry listed since");
            equal(Outcome.ABORTED, later.outcome("q", 8, new TxRef(N1, "lane-000", 9), 0), "rule 4: batch 8");

            checkpoint(base, 1, 7);
            LogView next = log.view();
            equal(1L, next.checkpoint().seq(), "the new checkpoint");
            equal(List.of(9L), List.copyOf(next.entries().get("q").keySet()), "the entries after it");
            equal(Outcome.COMMITTED, next.outcome("q", 7, new TxRef(N1, "lane-000", 8), 0), "batch 7 folded");
            equal(Outcome.ABORTED, next.outcome("q", 6, new TxRef(N1, "lane-000", 9), 0), "batch 6 folded");
        }
    }

    public static void testFoldersOfWritersNamedFromAnUnderscoreAreListedButNotTheLogsOwn() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.checkpoint(base, 0, "{'format': 1, 'seq': 0, 'written_at_ms': 1, 'queries': "
                    + "[{'query': '_old', 'through': 0, 'decided': 1, 'rows': 1, "
                    + "'last_committed_at_ms': 5}], 'lanes': [], 'nodes': []}");
            LogFiles.entry(base, "_old", 2, 200, new Tx(N1, "lane-000", 3));
            LogFiles.entry(base, "_new", 0, 100, new Tx(N1, "lane-000", 4));
            Files.createDirectories(base.resolve("_times"));
            LogView view = new CommitLog(base.toString()).view();
            equal(List.of("_new", "_old"), List.copyOf(view.entries().keySet()),
                    "writers named from '_' before checkpoints existed; not _checkpoints or _times");
            equal(200L, view.entry("_old", 2).committedAtMs(), "its entry past the gap");
        }
    }

    public static void testABatchWriteQueryWhoseBatchZeroIsFoldedIsNotListed() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.checkpoint(base, 0, "{'format': 1, 'seq': 0, 'written_at_ms': 1, 'queries': "
                    + "[{'query': 'batch-write-a', 'through': 0, 'decided': 1, 'rows': 1, "
                    + "'last_committed_at_ms': 5}], 'lanes': [], 'nodes': []}");
            Path listed = LogFiles.entry(base, "batch-write-a", 1, 100, new Tx(N1, "lane-000", 3));
            Files.writeString(listed, "never read");
            LogFiles.entry(base, "batch-write-b", 0, 200, new Tx(N1, "lane-000", 4));
            LogView view = new CommitLog(base.toString()).view();
            equal(null, view.entries().get("batch-write-a"), "batch-write-a is not listed");
            equal(200L, view.entry("batch-write-b", 0).committedAtMs(), "an unknown batch write is listed");
            isTrue(view.done("batch-write-a", 0), "batch 0 of batch-write-a is done");
        }
    }

    public static void testOutcomesFollowRulesOneToFive() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);                                  // q: txs 1..5 of lane-000 committed
            LogFiles.entry(base, "q", 5, 500, new Tx(N1, "lane-000", 6));
            LogFiles.entry(base, "q", 6, 600, new Tx(N1, "lane-000", 8));
            Resolver resolver = new Resolver();
            String uri = base.toString();
            TxRef six = new TxRef(N1, "lane-000", 6);
            equal(Outcome.COMMITTED, outcome(resolver, uri, "q", 5, six), "rule 1: the entry names it");
            equal(Outcome.ABORTED, outcome(resolver, uri, "q", 5, new TxRef(N1, "lane-000", 7)),
                    "rule 2: the entry lacks it");
            equal(Outcome.COMMITTED, outcome(resolver, uri, "q", 3, new TxRef(N1, "lane-000", 4)),
                    "rule 3: folded, in a committed range");
            equal(Outcome.ABORTED, outcome(resolver, uri, "q", 3, new TxRef(N1, "lane-000", 40)),
                    "rule 3: folded, in no range");
            equal(Outcome.ABORTED, outcome(resolver, uri, "q", 3, new TxRef(N2, "lane-000", 4)),
                    "rule 3: a lane the checkpoint does not know");
            equal(Outcome.UNDECIDED, outcome(resolver, uri, "q", 7, new TxRef(N1, "lane-000", 9)),
                    "rule 5: nothing later in the view");
            LogFiles.entry(base, "q", 8, 800, new Tx(N1, "lane-000", 10));     // past a gap
            equal(Outcome.COMMITTED, outcome(resolver, uri, "q", 8, new TxRef(N1, "lane-000", 10)),
                    "rule 1: an entry past a gap is in the view");
            equal(Outcome.ABORTED, outcome(resolver, uri, "q", 7, new TxRef(N1, "lane-000", 9)),
                    "rule 4: batch 8 is decided");
            LogFiles.entry(base, "q", 7, 700, new Tx(N1, "lane-000", 20));
            equal(Outcome.ABORTED, outcome(resolver, uri, "q", 7, new TxRef(N1, "lane-000", 9)),
                    "rule 2 once entry 7 appears");
            equal(Outcome.COMMITTED, outcome(resolver, uri, "q", 7, new TxRef(N1, "lane-000", 20)),
                    "rule 1: entry 7 names it");
            LogFiles.entry(base, "other", 3, 300);
            equal(Outcome.ABORTED, outcome(resolver, uri, "other", 1, six), "rule 4: a later batch is decided");
            equal(Outcome.UNDECIDED, outcome(resolver, uri, "q", 9, six), "rule 5");
            equal(Outcome.FOREIGN, resolver.outcome("{}".getBytes(), six), "not this sink's XID");
            equal(Outcome.UNDECIDED, new CommitLog(uri).view().outcome("..", 1, six, 0), "a query no folder has");
        }
    }

    private static Outcome outcome(Resolver resolver, String uri, String query, long batch, TxRef ref)
            throws Exception {
        return outcome(resolver, uri, query, batch, 0, ref);
    }

    /** The outcome of {@code ref} prepared with the XID of epoch {@code epoch} of the batch. */
    private static Outcome outcome(Resolver resolver, String uri, String query, long batch, long epoch, TxRef ref)
            throws Exception {
        return resolver.outcome(XidEncoder.encode(uri, query, batch, 0, 0, 1, epoch, 0), ref);
    }

    public static void testABatchIsDoneByItsEntryOrALaterDecidedOne() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);
            LogFiles.entry(base, "q", 5, 500);
            LogView view = new CommitLog(base.toString()).view();
            isTrue(view.done("q", 0) && view.done("q", 4), "folded batches");
            isTrue(view.done("q", 5), "an entry");
            isTrue(!view.done("q", 6), "a batch after every decided one");
            isTrue(!view.done("fresh", 0), "a query without decisions");
        }
    }

    public static void testALogWithoutCheckpointsIsEveryEntry() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.entry(base, "q", 0, 100, new Tx(N1, "lane-000", 1));
            LogFiles.entry(base, "q", 3, 300, new Tx(N1, "lane-000", 2));
            Files.writeString(base.resolve("q").resolve("00000000000000000004.json.tmp"), "half");
            Files.createDirectories(base.resolve("_times"));
            LogView view = new CommitLog(base.toString()).view();
            equal(List.of("q"), List.copyOf(view.entries().keySet()), "queries");
            equal(List.of(0L, 3L), List.copyOf(view.entries().get("q").keySet()), "every entry, gap or not");
            equal(Outcome.ABORTED, view.outcome("q", 1, new TxRef(N1, "lane-000", 5), 0), "rule 4");
            equal(2L, CommittedLane.of(view).get(new CommittedLane.Key(N1, "lane-000")).batches(), "lane");
        }
    }

    public static void testAViewIsReusedUntilANewerCheckpointAppears() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base, 0, 4);
            CommitLog log = new CommitLog(base.toString());
            LogView first = log.view();
            Path later = LogFiles.entry(base, "q", 5, 500);
            LogView second = log.view();
            isTrue(first.checkpoint() == second.checkpoint(), "the parsed checkpoint is reused");
            equal(null, first.entry("q", 5), "a view never changes");
            equal(500L, second.entry("q", 5).committedAtMs(), "the new entry");
            Files.delete(later);                             // as retention may once batch 5 is folded
            checkpoint(base, 1, 5);
            LogView third = log.view();
            equal(1L, third.checkpoint().seq(), "rebuilt from the newer checkpoint");
            equal(null, third.entry("q", 5), "entry 5 is folded");
            isTrue(third.done("q", 5), "and done");
        }
    }
}
