package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@link CommitLogWriter} writes entries (COMMIT_LOG.md, "Entries") in JSON.md's canonical form,
 *  created exclusively, read back by {@link CommitLog} (the reader
 *  {@link CommitLogGoldenTest} holds to the golden corpus); tests/test_jvm_write.py has Python
 *  read them. */
public final class CommitLogWriterTest {

    private CommitLogWriterTest() {
    }

    private static Map<String, Object> tx() {
        Map<String, Object> tx = new LinkedHashMap<>();
        tx.put("node", "n1@h");
        tx.put("host", "h");
        tx.put("root", "/r");
        tx.put("lane", "lane-000");
        tx.put("tx", 5L);
        tx.put("records", 2L);
        tx.put("rows", 10L);
        tx.put("bytes", 80);
        return tx;
    }

    public static void testAnEntryIsCanonicalJson() {
        equal("{\"batch\":3,\"committed_at_ms\":1700000000000,\"epoch\":2,\"format\":1,"
                + "\"query\":\"q\u00e9\",\"txs\":[{\"bytes\":80,\"host\":\"h\",\"lane\":"
                + "\"lane-000\",\"node\":\"n1@h\",\"records\":2,\"root\":\"/r\",\"rows\":10,"
                + "\"tx\":5}]}", new String(CommitLogWriter.json("q\u00e9", 3, 1700000000000L,
                List.of(tx()), 2, false), StandardCharsets.UTF_8), "a commit entry of epoch 2");
        equal("{\"aborted\":true,\"batch\":4,\"committed_at_ms\":1700000000001,\"format\":1,"
                + "\"query\":\"q\",\"txs\":[]}", new String(CommitLogWriter.json("q", 4,
                1700000000001L, List.of(), 0, true), StandardCharsets.UTF_8), "an abort entry");
    }

    public static void testARecordedDecisionIsReadBackAndMakesItsBatchDone() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            CommitLog log = new CommitLog(folder.path().resolve("_commits").toString());
            Decision written = new CommitLogWriter(log).record("q", 3, List.of(tx()), 0, false);
            Path entry = Path.of(log.entryPath("q", 3, 0));
            Decision read = Decision.fromJson(Files.readAllBytes(entry), entry.toString());
            equal(written.txRefs(), read.txRefs(), "the transactions named");
            isTrue(read.commits(new TxRef("n1@h", "lane-000", 5)), "it commits tx 5");
            isTrue(log.view().done("q", 3) && DriverCommit.done(log, "q", 3), "batch 3 is done");
            isTrue(!DriverCommit.done(log, "q", 4), "batch 4 is not");
            try (var left = Files.list(entry.getParent())) {
                equal(1L, left.count(), "no temporary file is left beside the entry");
            }
        }
    }

    public static void testANameTakenIsRefusedSayingWhoTookIt() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            CommitLog log = new CommitLog(folder.path().toString());
            CommitLogWriter writer = new CommitLogWriter(log);
            writer.record("q", 1, List.of(tx()), 0, false);
            contains(raises(CommitLogWriter.BatchTakenException.class,
                    () -> writer.record("q", 1, List.of(), 0, false)).getMessage(),
                    "batch 1 of query q (epoch 0) was decided by another writer at", "stop one");
            writer.record("q", 2, List.of(), 0, true);                 // an operator's abort
            contains(raises(CommitLogWriter.BatchTakenException.class,
                    () -> writer.record("q", 2, List.of(tx()), 0, false)).getMessage(),
                    "was aborted by an operator", "(epoch 1)");
            contains(raises(EventsException.class, () -> writer.record("_x", 0, List.of(), 0, false))
                    .getMessage(), "starts with '_'", "txnAppId");
        }
    }

    public static void testTheLogIdIsCreatedOnceAndTasksEpochsMustAgree() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            CommitLog log = new CommitLog(folder.path().toString());
            String made = new CommitLogWriter(log).logId();
            equal(32, made.length(), "a uuid4 hex");
            equal(made, new CommitLogWriter(new CommitLog(folder.path().toString())).logId(), "kept");
            Map<String, Object> one = new LinkedHashMap<>(tx());
            one.put("epoch", 0L);
            Map<String, Object> other = new LinkedHashMap<>(tx());
            other.put("epoch", 1L);
            contains(raises(CommitLogWriter.BatchTakenException.class,
                    () -> DriverCommit.commit(log, "q", 0, List.of(one, other))).getMessage(),
                    "aborted by an operator", "epochs [0, 1]");
            isTrue(!log.hasEntry("q", 0), "nothing recorded");
        }
    }
}
