package io.sparkjournal.events;

import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;

import io.sparkjournal.TempFolder;
import io.sparkjournal.journal.LaneWriterLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The JVM's commit-log checkpoint and retention (LogCheckpointWriter,
 * LogRetention, LogMaintenance, LogCheckpointer) write what Python's
 * log_checkpointer writes and read back as the spec says.
 */
public final class LogMaintenanceTest {

    private static final long NOW_MS = 1764250099000L;
    private static final LogFiles.Tx A = new LogFiles.Tx("n1@host-a", "lane-000", 1);

    /**
     * SHA-256 of the files Python's {@code log_checkpointer.checkpoint(log,
     * now_ms=1764250099000)} creates or changes in a copy of each golden case
     * (tests/test_jvm_log_checkpoint.py compares whole files on fresh logs).
     */
    private static final Map<String, List<String>> PYTHON_WROTE = Map.of(
            "plain", List.of(
                    "_checkpoints/00000000000000000000.json",
                    "d2df120b517f5447b1dfd8928b2a00bcfef036d574791fc6980590061b504ae6",
                    "_times/5b0e6f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b/00000000000000000000.times",
                    "21bcc5aefa9e564f591482ff769174d1f5a80bf93d7f077bb3612cb680574251",
                    "_times/batch-write-9f3c2a7d1e0b4c5a/00000000000000000000.times",
                    "4cea56efd966bc12aa8255f8301ac228fd831919319d5a46ccc0d389ee88b744",
                    "_times/nightly-load/00000000000000000000.times",
                    "e8dfcbbf59f2d0b84e9243394005abab995a922a814d0a5d92c77923b0decb20"),
            "aborted", List.of(
                    "_checkpoints/00000000000000000001.json",
                    "ad09dc23cae69fe1b5008a2929d868507d3ef3abe04aefd8932f7a19b087284d",
                    "_times/events-to-journal/00000000000000000000.times",
                    "c814b7c4457edec63219f291babf4b159d2137442f78cc456d511c5380e89781",
                    "_times/rerun/00000000000000000000.times",
                    "daa30281c7da6f1d0f25021e5e21517ecf32de96b31bce8a33e6ed512b5968af"),
            "checkpointed", List.of(
                    "_checkpoints/00000000000000000002.json",
                    "c986422cef9d2c34be9bd26a48aaeb0ac9a9768b37b1abd21b9d1ffe61affa8f",
                    "_times/5b0e6f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b/00000000000000000000.times",
                    "7951abb998699b34921b007acfda0c47ffad767eca0e2292c3426ba4608f7842",
                    "_times/batch-write-00ff00ff00ff00ff/00000000000000000000.times",
                    "6616d24cbd5de306fa828a51ee59f55a15d14f6783fa189bf0352c625f1f45bf",
                    "_times/late-app/00000000000000000000.times",
                    "fa4a30449b019224d436c762801267b249244bdb7ba6bf3fbe5e5926f55edaae",
                    "_times/nightly-load/00000000000000000000.times",
                    "736b4c79df6e38717f1ad45f21b82832e5afd8067bd812f2d18ded1556a887d7"));

    public static void testTheCheckpointOfAGoldenCaseIsTheOnePythonWrites() throws Exception {
        for (Map.Entry<String, List<String>> golden : PYTHON_WROTE.entrySet()) {
            try (TempFolder temp = new TempFolder()) {
                Path log = CommitLogGoldenTest.copied(golden.getKey(), temp.path());
                LogCheckpointWriter.Made made = LogCheckpointWriter.checkpoint(
                        new CommitLog(log.toString()), NOW_MS, null);
                List<String> files = golden.getValue();
                equal(files.get(0), "_checkpoints/" + made.name(), golden.getKey() + ": the checkpoint made");
                for (int i = 0; i < files.size(); i += 2) {
                    equal(files.get(i + 1), sha256(log.resolve(files.get(i))), golden.getKey() + " " + files.get(i));
                }
                LogView view = new CommitLog(log.toString()).view();
                equal(0, LogCheckpointer.entriesPastCheckpoint(view) - aborts(view), "entries past it");
            }
        }
    }

    public static void testRetentionDeletesWhatTwoCheckpointsCoverAndKeepsTheNewest() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path path = temp.path().resolve("log");
            for (long batch = 0; batch < 6; batch++) {
                LogFiles.entry(path, "q", batch, 1000 + batch, new LogFiles.Tx("n1@host-a", "lane-000", batch + 1));
            }
            CommitLog log = new CommitLog(path.toString());
            long now = System.currentTimeMillis() + 1000;          // every entry file is older
            LogMaintenance.Result first = LogMaintenance.maintain(log, 2, 0, nanos(now));
            equal("00000000000000000000.json", first.checkpoint(), "first checkpoint");
            equal(0, first.deletedEntries(), "one checkpoint: nothing deleted");
            LogFiles.entry(path, "q", 6, 1006, new LogFiles.Tx("n1@host-a", "lane-000", 7));
            LogFiles.entry(path, "q", 7, 1007, new LogFiles.Tx("n1@host-a", "lane-000", 8));
            LogMaintenance.Result second = LogMaintenance.maintain(log, 2, 0, nanos(now + 60_000));
            equal("00000000000000000001.json", second.checkpoint(), "second checkpoint");
            equal(6, second.deletedEntries(), "batches 0..5: covered by checkpoint 0, not the newest 2");
            isTrue(Files.exists(path.resolve("q/00000000000000000006.json")), "batch 6 kept");
            LogMaintenance.Result third = LogMaintenance.maintain(log, 2, TimeUnit.HOURS.toNanos(1),
                    nanos(now + 120_000));
            equal(null, third.checkpoint(), "nothing new to fold and the newest is young: no checkpoint");
            LogMaintenance.Result renewed = LogMaintenance.maintain(log, 2, TimeUnit.SECONDS.toNanos(1),
                    nanos(now + 180_000));
            equal("00000000000000000002.json", renewed.checkpoint(), "renewed: older than the retain time");
            equal(1, renewed.deletedCheckpoints(), "checkpoint 0 deleted");
            LogView view = new CommitLog(path.toString()).view();
            equal(7L, view.lastCommitted("q"), "last committed");
            equal(1002L, view.committedAtMs("q", 2), "a deleted entry's commit time, from its segment");
            equal(Outcome.COMMITTED, view.outcome("q", 3, new TxRef("n1@host-a", "lane-000", 4), 0), "outcome");
        }
    }

    public static void testNothingToFoldWritesNothing() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path path = temp.path().resolve("log");
            LogFiles.entry(path, "q", 0, 1000, A);
            CommitLog log = new CommitLog(path.toString());
            equal(1, LogCheckpointWriter.checkpoint(log, NOW_MS, null).folded(), "folded");
            equal(new LogCheckpointWriter.Made(null, 0), LogCheckpointWriter.checkpoint(log, NOW_MS, null), "again");
            LogFiles.abort(path, "q", 1, 0, 1001);
            equal(new LogCheckpointWriter.Made(null, 0), LogCheckpointWriter.checkpoint(log, NOW_MS, null),
                    "an abort entry folds nothing");
            equal(1, Checkpoints.list(log).length, "one checkpoint");
            try (TempFolder empty = new TempFolder()) {
                CommitLog none = new CommitLog(empty.path().toString());
                equal(new LogCheckpointWriter.Made(null, 0), LogCheckpointWriter.checkpoint(none, NOW_MS, 0L),
                        "an empty log");
                equal(0, Checkpoints.list(none).length, "no checkpoint in an empty log");
            }
        }
    }

    public static void testADamagedNewestCheckpointIsPassedByTheNextSeq() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path path = temp.path().resolve("log");
            LogFiles.entry(path, "q", 0, 1000, A);
            CommitLog log = new CommitLog(path.toString());
            LogCheckpointWriter.checkpoint(log, NOW_MS, null);
            LogFiles.checkpoint(path, 1, "{'format': 1, 'seq'");
            LogFiles.entry(path, "q", 1, 1001, new LogFiles.Tx("n1@host-a", "lane-000", 2));
            LogCheckpointWriter.Made made = LogCheckpointWriter.checkpoint(log, NOW_MS, null);
            equal(new LogCheckpointWriter.Made("00000000000000000002.json", 1), made, "the next seq");
            LogView view = new CommitLog(path.toString()).view();
            equal(2L, view.checkpoint().seq(), "read");
            equal(1L, view.checkpoint().query("q").through(), "through");
            equal(2L, view.checkpoint().query("q").decided(), "decided");
        }
    }

    public static void testTheCheckpointLockIsTriedNeverWaitedFor() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path path = temp.path().resolve("log");
            LogFiles.entry(path, "q", 0, 1000, A);
            CommitLog log = new CommitLog(path.toString());
            try (LaneWriterLock held = LogMaintenance.lock(log)) {
                isTrue(held != null, "taken");
                equal(null, LogMaintenance.lock(log), "held in this JVM: refused");
                LogMaintenance.Result skipped = LogMaintenance.maintain(log, 0, 0, nanos(NOW_MS));
                isTrue(!skipped.skipped().isEmpty(), "skipped while held");
                equal(0, Checkpoints.list(log).length, "nothing written while held");
            }
            equal("00000000000000000000.json", LogMaintenance.maintain(log, 0, 0, nanos(NOW_MS)).checkpoint(),
                    "written once released");
        }
    }

    public static void testTheCheckpointerRunsOnceTheIntervalIsReached() throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path path = temp.path().resolve("log");
            LogFiles.entry(path, "q", 0, 1000, A);
            CommitLog log = new CommitLog(path.toString());
            LogCheckpointer checkpointer = LogCheckpointer.forLog(log);
            isTrue(checkpointer == LogCheckpointer.forLog(new CommitLog(path.toString())), "one per log");
            int past = LogCheckpointer.entriesPastCheckpoint(log.view());
            equal(null, checkpointer.afterDecision(past, 2, 0, 0), "1 of 2");
            equal(null, checkpointer.afterDecision(past, 0, 0, 0), "0: never");
            Thread run = checkpointer.afterDecision(2, 2, 0, 0);
            run.join(30_000);
            equal("00000000000000000000.json", checkpointer.last().checkpoint(), "run");
            LogFiles.checkpoint(path, 1, "not json");
            LogFiles.checkpoint(path, 2, "not json");
            checkpointer.afterDecision(2, 2, 0, 0).join(30_000);      // a failure: logged, never thrown
            equal("00000000000000000000.json", checkpointer.last().checkpoint(), "the failed run left last");
        }
    }

    public static void testLaneRangesMergeAndKeepHolesAsPythonAddsThem() {
        List<long[]> ranges = new ArrayList<>();
        for (long tx : new long[] {5, 3, 4, 9, 7, 1, 8}) {
            CheckpointState.addTx(ranges, tx);
        }
        equal("[[1, 1], [3, 5], [7, 9]]", shown(ranges), "holes");
        CheckpointState.addTx(ranges, 6);
        CheckpointState.addTx(ranges, 2);
        equal("[[1, 9]]", shown(ranges), "closed");
        CheckpointState.addTx(ranges, -1);
        CheckpointState.addTx(ranges, 0);
        equal("[[0, 9], [18446744073709551615, 18446744073709551615]]", shown(ranges), "u64 ends");
    }

    private static String shown(List<long[]> ranges) {
        List<String> parts = new ArrayList<>();
        for (long[] range : ranges) {
            parts.add("[" + Long.toUnsignedString(range[0]) + ", " + Long.toUnsignedString(range[1]) + "]");
        }
        return parts.toString();
    }

    private static int aborts(LogView view) {
        int count = 0;
        for (Map<Long, Decision> entries : view.entries().values()) {
            count += (int) entries.values().stream().filter(Decision::aborted).count();
        }
        return count;
    }

    private static long nanos(long ms) {
        return TimeUnit.MILLISECONDS.toNanos(ms);
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
