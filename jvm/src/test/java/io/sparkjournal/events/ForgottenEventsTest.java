package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import io.sparkjournal.events.LogFiles.Tx;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * A view's forgotten nodes as reads see them: their lanes are not among the
 * committed lanes a read requires ({@link CommittedLane#of}), and
 * {@link ForgottenEvents} counts the batches and rows the view credits to
 * them, from the checkpoint's node counts (whose optional "bytes" and
 * "last_committed_at_ms" are read) plus the entries after it.
 */
public final class ForgottenEventsTest {

    static final String N1 = "n1@h1";
    static final String N2 = "n2@h2";

    private ForgottenEventsTest() {
    }

    /** Checkpoint 0 of query q through batch 2: N1 with 3 batches and 9 rows, N2 with 2 and 4. */
    static void checkpoint(Path log) throws Exception {
        LogFiles.checkpoint(log, 0, "{'format': 1, 'seq': 0, 'written_at_ms': 1000, "
                + "'queries': [{'query': 'q', 'through': 2, 'decided': 3, 'rows': 13, 'last_committed_at_ms': 900}], "
                + "'lanes': [{'node': '" + N1 + "', 'host': 'h1', 'root': '/j', 'lane': 'lane-000', 'batches': 3, "
                + "'rows': 9, 'committed': [[1, 3]]}, {'node': '" + N2 + "', 'host': 'h2', 'root': '/j', "
                + "'lane': 'lane-000', 'batches': 2, 'rows': 4, 'committed': [[1, 2]]}], "
                + "'nodes': [{'node': '" + N1 + "', 'batches': 3, 'rows': 9, 'bytes': 3600, "
                + "'last_committed_at_ms': 900}, {'node': '" + N2 + "', 'batches': 2, 'rows': 4}]}");
    }

    public static void testForgottenNodesLanesAreNotRequiredAndTheirEventsAreCounted() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base);
            LogFiles.entry(base, "q", 3, 1000, new Tx(N1, "lane-000", 4), new Tx(N1, "lane-001", 1),
                    new Tx(N2, "lane-000", 3));                         // N1: one batch, two rows
            LogFiles.entry(base, "q", 4, 1100, new Tx(N2, "lane-001", 1));
            LogFiles.abort(base, "q", 5, 0, 1200);                       // credits nobody
            CommitLog log = new CommitLog(base.toString());
            equal(ForgottenEvents.NONE, ForgottenEvents.of(log.view()), "nothing forgotten");
            equal(4, CommittedLane.of(log.view()).size(), "every lane before the forget");

            ForgottenNodeTest.write(base, N1 + ".json", ForgottenNodeTest.record(N1));
            LogView view = log.view();
            equal(List.of(new CommittedLane.Key(N2, "lane-000"), new CommittedLane.Key(N2, "lane-001")),
                    List.copyOf(CommittedLane.of(view).keySet()), "only N2's lanes are required");
            equal(3L, CommittedLane.of(view).get(new CommittedLane.Key(N2, "lane-000")).batches(), "N2's count");
            ForgottenEvents lost = ForgottenEvents.of(view);
            equal(new ForgottenEvents(List.of(N1), 4, 11), lost, "3 + 1 batches, 9 + 2 rows of N1");
            equal("/j: 11 committed events of 1 forgotten node(s) (n1@h1) are not read (sparkjournal nodes "
                    + "--forget; --restore brings a node back)", lost.line("/j"), "the log line, as Python's");

            ForgottenNodeTest.write(base, N2 + ".json", ForgottenNodeTest.record(N2));
            equal(new ForgottenEvents(List.of(N1, N2), 4 + 4, 11 + 6), ForgottenEvents.of(log.view()), "both");
            equal(0, CommittedLane.of(log.view()).size(), "no lane required");
        }
    }

    public static void testTheLineGroupsThousandsAndIsEmptyWhenNothingIsForgotten() {
        equal("", ForgottenEvents.NONE.line("/j"), "nothing forgotten");
        contains(new ForgottenEvents(List.of("a@x", "b@y"), 3, 1234567).line("/j"),
                "/j: 1,234,567 committed events of 2 forgotten node(s) (a@x, b@y) are not read");
    }

    public static void testCheckpointNodesOptionalFieldsAreReadWhenPresent() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            checkpoint(base);
            LogCheckpoint read = new CommitLog(base.toString()).view().checkpoint();
            equal(new LogCheckpoint.Node(N1, 3, 9, 3600, 900), read.nodes().get(N1), "with bytes and time");
            equal(new LogCheckpoint.Node(N2, 2, 4, 0, 0), read.nodes().get(N2), "absent: 0");
        }
        for (String field : new String[] {"'bytes': 1.5", "'bytes': -1", "'last_committed_at_ms': 'soon'"}) {
            String json = ("{'format': 1, 'seq': 3, 'written_at_ms': 1, 'queries': [], 'lanes': [], "
                    + "'nodes': [{'node': 'n@h', 'batches': 1, 'rows': 1, " + field + "}]}").replace('\'', '"');
            contains(raises(CommitLogException.class, () -> LogCheckpoint.parse(
                    json.getBytes(StandardCharsets.UTF_8), "/log/_checkpoints/3.json", 3)).getMessage(),
                    "/log/_checkpoints/3.json is damaged", field.substring(0, field.indexOf(':')).replace('\'', '"'));
        }
    }
}
