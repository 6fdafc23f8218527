package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import io.sparkjournal.events.LogFiles.Tx;
import io.sparkjournal.format.FormatVersionException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Forgotten node records (COMMIT_LOG.md, "Forgotten nodes"): what
 * {@link ForgottenNode#parse} accepts and refuses, the view reading
 * {@code _forgotten/} at every build, the writer's refusal and the reader's
 * quarantine line.
 */
public final class ForgottenNodeTest {

    static final String NODE = "n1@h1";

    private ForgottenNodeTest() {
    }

    /** A record of {@code node} as `sparkjournal nodes --forget` writes it (single quotes for double). */
    static String record(String node) {
        return "{'format': 1, 'node': '" + node + "', 'forgotten_at_ms': 1764249999000, 'batches': 2, "
                + "'rows': 20, 'bytes': 3600, 'lanes': ['lane-000', 'lane-001']}";
    }

    /** Writes {@code json} (single quotes for double) as {@code _forgotten/<name>}. */
    static Path write(Path log, String name, String json) throws Exception {
        Path file = log.resolve(ForgottenNode.FOLDER).resolve(name);
        Files.createDirectories(file.getParent());
        Files.writeString(file, json.replace('\'', '"'));
        return file;
    }

    private static ForgottenNode parse(String json, String node) throws Exception {
        return ForgottenNode.parse(json.replace('\'', '"').getBytes(StandardCharsets.UTF_8), "/log/x.json", node);
    }

    public static void testAGoodRecordIsReadWhole() throws Exception {
        ForgottenNode found = parse(record(NODE).replace("}", ", 'later': 'ignored'}"), NODE);
        equal(new ForgottenNode(NODE, 1764249999000L, 2, 20, 3600, List.of("lane-000", "lane-001")), found,
                "the record");
    }

    public static void testADamagedRecordNamesItsFileAndHowToRecover() throws Exception {
        String[] damaged = {
            "not json",
            "[1]",
            "{'format': 0, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': []}",
            "{'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': []}",
            "{'format': 1, 'node': 'n1@h1', 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': []}",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 1.5, 'rows': 0, 'bytes': 0, 'lanes': []}",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': true, 'rows': 0, 'bytes': 0, 'lanes': []}",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': '9', 'bytes': 0, 'lanes': []}",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': 'lane-000'}",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': [0]}",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0}",
            "{'format': 1.0, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': []}",
            "{'format': true, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': []}",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': null}",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 0, 'rows': 0, 'bytes': 0, 'lanes': []} []",
            "{'format': 1, 'node': 'n1@h1', 'forgotten_at_ms': 0, 'batches': 99999999999999999999, 'rows': 0, "
                + "'bytes': 0, 'lanes': []}",
        };
        for (String json : damaged) {
            String message = raises(CommitLogException.class, () -> parse(json, NODE)).getMessage();
            contains(message, "forgotten node record /log/x.json is damaged (",
                    "restore it from a backup, or delete it to restore the node");
        }
        contains(raises(CommitLogException.class, () -> parse(damaged[2], NODE)).getMessage(),
                "(its \"format\" is 0; this reader reads format 1)");
        contains(raises(CommitLogException.class, () -> parse(damaged[4], NODE)).getMessage(),
                "(\"forgotten_at_ms\" is missing)");
    }

    public static void testARecordOfAnotherNodeThanItsNameIsDamage() throws Exception {
        String message = raises(CommitLogException.class, () -> parse(record("n2@h2"), NODE)).getMessage();
        contains(message, "it is the record of node \"n2@h2\", but its file is named for node \"n1@h1\"",
                "delete it to restore the node");
        contains(raises(CommitLogException.class, () -> parse(record(NODE).replace("'n1@h1'", "7"), NODE))
                .getMessage(), "\"node\" is an integer, not a string");
    }

    public static void testANewerFormatIsRefusedAsSuch() {
        FormatVersionException newer = raises(FormatVersionException.class,
                () -> parse("{'format': 2, 'node': 'somebody else'}", NODE));
        equal(2L, newer.found(), "the format found");
        contains(newer.getMessage(), "/log/x.json");
    }

    public static void testTheViewReadsTheRecordsAtEveryBuild() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.entry(base, "q", 0, 100, new Tx(NODE, "lane-000", 1));
            CommitLog log = new CommitLog(base.toString());
            equal(Map.of(), log.view().forgotten(), "nothing forgotten");
            Path file = write(base, NODE + ".json", record(NODE));
            write(base, "n2@h2.json.tmp", "half a rec");                         // a forget in progress
            Map<String, ForgottenNode> forgotten = log.view().forgotten();
            equal(List.of(NODE), List.copyOf(forgotten.keySet()), "the next view has it; *.tmp is no record");
            equal(20L, forgotten.get(NODE).rows(), "its record");
            equal(List.of("q"), log.queries(), "_forgotten is the log's own folder, never a query");
            Files.delete(file);
            isTrue(log.view().forgotten().isEmpty(), "restored: gone from the next view");
        }
    }

    public static void testADamagedRecordFailsTheView() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            Path file = write(base, NODE + ".json", record("n2@h2"));
            String message = raises(CommitLogException.class, () -> new CommitLog(base.toString()).view())
                    .getMessage();
            contains(message, file.toString(), "delete it to restore the node");
        }
    }

    public static void testAWriterRefusesAForgottenRootAndAReaderQuarantinesIt() throws Exception {
        Map<String, ForgottenNode> forgotten = Map.of(NODE, parse(record(NODE), NODE));
        ForgottenNode.refuseRoot(forgotten, "n2@h2", "/data/j");
        ForgottenNode.refuseRoot(forgotten, null, "/data/j");
        contains(raises(EventsException.class, () -> ForgottenNode.refuseRoot(forgotten, NODE, "/data/j"))
                .getMessage(), "root /data/j carries NODE_ID n1@h1, which an operator forgot",
                "`sparkjournal nodes PATH --restore n1@h1`", "give this host a fresh root");
        equal("/j: node n1@h1 is forgotten (sparkjournal nodes --forget) but its root is back on host(s) "
                + "a, b: its lanes stay out of every read (quarantined) until `sparkjournal nodes /j --restore "
                + "n1@h1`", ForgottenNode.quarantined("/j", NODE, List.of("b", "a", "b")), "the quarantine line");
        contains(ForgottenNode.quarantined("/j", NODE, List.of()), "back on host(s) this host:");
    }
}
