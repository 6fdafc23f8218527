package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.GoldenCorpus;
import io.sparkjournal.TempFolder;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.CodePoints;
import io.sparkjournal.journal.StrictJson;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The Java reader gives the golden commit log corpus's answers
 * (tests/golden/commit_log/, COMMIT_LOG.md): for every case, each outcome
 * (at the epoch asked, 0 when not given), write epoch, "done", commit time,
 * committed lane and last committed batch ("last_decided") its expected.json
 * lists; a failing case throws its error's class naming the
 * file. The corpus folder is the system property {@value #GOLDEN}
 * (tests/test_jvm_unit.py passes it). Each case's log is read from a copy in
 * a temporary folder: the checked-in files are never opened for writing.
 *
 * <p>"done" is asked as the connector asks it before writing a batch
 * ({@link TaskWrite}): the view says so, or a commit entry of the batch exists.
 */
public final class CommitLogGoldenTest {

    static final String GOLDEN = "sparkjournal.golden";
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final List<String> ANSWERS = List.of("outcomes", "write_epochs", "done", "committed_at_ms",
            "lanes", "forgotten", "last_decided");

    private CommitLogGoldenTest() {
    }

    public static void testEveryGoldenCaseGivesTheAnswersInItsExpectedJson() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (String name : cases()) {
            JsonNode expected = expected(name);
            try (TempFolder folder = new TempFolder()) {
                CommitLog log = new CommitLog(copied(name, folder.path()).toString());
                ObjectNode found = answers(log, expected);
                for (String answer : ANSWERS) {
                    if (expected.has(answer)) {
                        differences(name + ": " + answer, expected.get(answer), found.get(answer), wrong);
                    }
                }
            }
        }
        isTrue(wrong.isEmpty(), "answers differ from expected.json:\n" + String.join("\n", wrong));
    }

    public static void testEveryFailingGoldenCaseThrowsItsErrorNamingTheFile() throws Exception {
        int failing = 0;
        for (String name : cases()) {
            JsonNode error = expected(name).get("error");
            if (error == null) {
                continue;
            }
            failing++;
            Class<? extends Exception> kind = switch (error.get("kind").textValue()) {
                case "format-version" -> FormatVersionException.class;
                case "damaged-checkpoint", "damaged-times" -> CommitLogException.class;
                default -> throw new AssertionError(name + ": unknown error kind " + error);
            };
            try (TempFolder folder = new TempFolder()) {
                CommitLog log = new CommitLog(copied(name, folder.path()).toString());
                Exception thrown = "view".equals(error.get("answer").textValue())
                        ? raises(kind, log::view)
                        : raises(kind, () -> log.view().committedAtMs(error.get("query").textValue(),
                                error.get("batch").longValue()));
                contains(name + ": " + thrown.getMessage(), error.get("names").textValue());
            }
        }
        isTrue(failing > 0, "no golden case fails");
    }

    /** Java's answers to the questions {@code expected} asks (its error aside), shaped as expected.json. */
    private static ObjectNode answers(CommitLog log, JsonNode expected) throws Exception {
        ObjectNode found = JSON.objectNode();
        if (expected.has("outcomes")) {
            ArrayNode list = found.putArray("outcomes");
            for (JsonNode asked : expected.get("outcomes")) {
                TxRef ref = new TxRef(asked.get("node").textValue(), asked.get("lane").textValue(),
                        asked.get("tx").longValue());
                Outcome outcome = log.view().outcome(query(asked), batch(asked), ref, asked.path("epoch").asLong(0));
                ObjectNode copy = asked.deepCopy();
                list.add(copy.put("outcome", outcome.value()));
            }
        }
        if (expected.has("write_epochs")) {
            ArrayNode list = found.putArray("write_epochs");
            for (JsonNode asked : expected.get("write_epochs")) {
                ObjectNode copy = asked.deepCopy();
                list.add(copy.put("write_epoch", log.view().writeEpoch(query(asked), batch(asked))));
            }
        }
        if (expected.has("done")) {
            ArrayNode list = found.putArray("done");
            for (JsonNode asked : expected.get("done")) {
                boolean done = log.view().done(query(asked), batch(asked)) || log.hasEntry(query(asked), batch(asked));
                ObjectNode copy = asked.deepCopy();
                list.add(copy.put("done", done));
            }
        }
        if (expected.has("committed_at_ms")) {
            ArrayNode list = found.putArray("committed_at_ms");
            for (JsonNode asked : expected.get("committed_at_ms")) {
                Long at = log.view().committedAtMs(query(asked), batch(asked));
                ObjectNode copy = asked.deepCopy();
                list.add(at == null ? copy.putNull("committed_at_ms") : copy.put("committed_at_ms", at));
            }
        }
        if (expected.has("lanes")) {
            ArrayNode list = found.putArray("lanes");
            List<CommittedLane> lanes = new ArrayList<>(CommittedLane.of(log.view()).values());
            lanes.sort(Comparator.comparing(CommittedLane::node, CodePoints::compare)
                    .thenComparing(CommittedLane::lane, CodePoints::compare));
            for (CommittedLane lane : lanes) {
                list.addObject().put("node", lane.node()).put("lane", lane.lane()).put("host", lane.host())
                        .put("root", lane.root()).put("batches", lane.batches())
                        .put("node_batches", lane.nodeBatches());
            }
        }
        if (expected.has("forgotten")) {
            ForgottenEvents lost = ForgottenEvents.of(log.view());
            ObjectNode forgotten = found.putObject("forgotten");
            ArrayNode nodes = forgotten.putArray("nodes");
            lost.nodes().forEach(nodes::add);
            forgotten.put("batches", lost.batches()).put("events", lost.events());
        }
        if (expected.has("last_decided")) {
            LogView view = log.view();
            ObjectNode decided = found.putObject("last_decided");
            Set<String> queries = new TreeSet<>(CodePoints::compare);
            queries.addAll(view.checkpoint().queries().keySet());
            queries.addAll(view.entries().keySet());
            for (String query : queries) {
                decided.put(query, view.lastCommitted(query));
            }
        }
        return (ObjectNode) StrictJson.parse(new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsBytes(found));
    }

    /** Adds to {@code wrong} one line per item of {@code found} that differs from {@code expected}'s. */
    private static void differences(String where, JsonNode expected, JsonNode found, List<String> wrong) {
        if (expected.isArray() && found != null && found.isArray() && expected.size() == found.size()) {
            for (int i = 0; i < expected.size(); i++) {
                if (!expected.get(i).equals(found.get(i))) {
                    wrong.add(where + "[" + i + "]: expected " + expected.get(i) + ", found " + found.get(i));
                }
            }
        } else if (expected.isObject() && found != null && found.isObject() && expected.size() == found.size()) {
            for (Iterator<String> keys = expected.fieldNames(); keys.hasNext(); ) {
                String key = keys.next();
                if (!expected.get(key).equals(found.get(key))) {
                    wrong.add(where + " of " + key + ": expected " + expected.get(key) + ", found " + found.get(key));
                }
            }
        } else if (!expected.equals(found)) {
            wrong.add(where + ": expected " + expected + ", found " + found);
        }
    }

    private static String query(JsonNode asked) {
        return asked.get("query").textValue();
    }

    private static long batch(JsonNode asked) {
        return asked.get("batch").longValue();
    }

    /** The corpus folder, from the system property. */
    static Path golden() {
        return GoldenCorpus.folder(GOLDEN, "tests/golden/commit_log");
    }

    /** The case folders of the corpus, by name. */
    private static List<String> cases() throws IOException {
        return GoldenCorpus.cases(golden(), Files::isDirectory);
    }

    private static JsonNode expected(String name) throws IOException {
        return StrictJson.parse(Files.readAllBytes(golden().resolve(name).resolve("expected.json")));
    }

    /** The case's log copied into {@code into}: the folder a reader opens. */
    static Path copied(String name, Path into) throws IOException {
        return TempFolder.copyTree(golden().resolve(name).resolve("log"), into.resolve("log"));
    }
}
