package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import io.sparkjournal.journal.DiskModes;
import io.sparkjournal.journal.DiskModesTest;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A JVM task write and the JVM driver's commit-log writes create every folder
 * and file with the journal's dirMode / fileMode (io/modes.py's contract,
 * {@link DiskModes}): the root, NODE_ID, the lane, its locks and data files,
 * and the commit log under the root (LOG_ID, schema.arrow, the entry, commit
 * times, the checkpoint and its lock); a missing parent above the root gets
 * the defaults, as in Python; files and folders that exist keep their modes.
 * The modes 0700 / 0600 come out exact under any umask that leaves the owner
 * alone (022 in CI); the umask's own effect is DiskModesTest's.
 */
public final class TaskWriteModesTest {

    private static final Map<String, Object> MODES = Map.of("dirMode", 0700, "fileMode", 0600,
            "fileSize", 65536, "bufferSize", 16384);

    private TaskWriteModesTest() {
    }

    public static void testATaskWriteAndItsCommitCreateEverythingWithTheJournalsModes()
            throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path root = folder.path().resolve("above").resolve("root");
            Path log = root.resolve("_commits");
            writeAndCommit(root, log, "q");
            Map<String, String> found = modesUnder(root);
            for (String made : List.of("", "NODE_ID", "lane-000", "lane-000/journal.lock",
                    "lane-000/files.lock", "lane-000/data-0000000001.sjd", "_commits",
                    "_commits/LOG_ID", "_commits/schema.arrow", "_commits/q",
                    "_commits/q/00000000000000000000.json", "_commits/_checkpoints",
                    "_commits/_checkpoints/checkpoint.lock",
                    "_commits/_checkpoints/00000000000000000000.json", "_commits/_times",
                    "_commits/_times/q", "_commits/_times/q/00000000000000000000.times")) {
                isTrue(found.containsKey(made), made + " was not created: " + found.keySet());
            }
            Map<String, String> wrong = new TreeMap<>();
            for (Map.Entry<String, String> each : found.entrySet()) {
                boolean folderMade = Files.isDirectory(root.resolve(each.getKey()));
                if (!each.getValue().equals(folderMade ? "rwx------" : "rw-------")) {
                    wrong.put(each.getKey(), each.getValue());
                }
            }
            equal(Map.of(), wrong, "folders 0700 and files 0600 under the root");
            equal(DiskModes.DEFAULTS.dirMode() & ~DiskModesTest.umask(folder.path()),
                    DiskModesTest.bits(root.getParent()),
                    "the missing parent above the root: the defaults, as Python's make_dirs");
        }
    }

    public static void testWhatExistsKeepsItsModes() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path root = folder.path().resolve("root");
            Path lane = root.resolve("lane-000");
            Files.createDirectories(lane);
            Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.setPosixFilePermissions(lane, PosixFilePermissions.fromString("rwxr-xr-x"));
            Files.writeString(root.resolve(NodeIds.FILE), "0123456789abcdef0123456789abcdef@h\n");
            Files.setPosixFilePermissions(root.resolve(NodeIds.FILE),
                    PosixFilePermissions.fromString("rw-r--r--"));
            writeAndCommit(root, root.resolve("_commits"), "kept");
            Map<String, String> found = modesUnder(root);
            equal("rwxr-xr-x", found.get(""), "the root");
            equal("rwxr-xr-x", found.get("lane-000"), "the lane");
            equal("rw-r--r--", found.get("NODE_ID"), "NODE_ID");
            equal("rw-------", found.get("lane-000/journal.lock"), "a lock made now");
            equal("rw-------", found.get("lane-000/data-0000000001.sjd"), "a data file made now");
            equal("rwx------", found.get("_commits"), "the commit log's folder made now");
        }
    }

    public static void testModesThatAreNotResolvedBitsFailTheTask() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path root = folder.path().resolve("root");
            for (Map<String, Object> options : List.<Map<String, Object>>of(Map.of("dirMode", "0700"),
                    Map.of("fileMode", 0666), Map.of("dirMode", 0600))) {
                TaskWrite.Plan plan = new TaskWrite.Plan(root.toString(), options,
                        folder.path().resolve("_commits").toString(), null, "q", 0);
                TaskWrite.SinkTaskException refused = raises(TaskWrite.SinkTaskException.class,
                        () -> TaskWrite.run(plan, new TaskWrite.Identity(0, 0, 1), List.of(body()).iterator(),
                                "1"));
                contains(refused.getMessage(), "option " + options.keySet().iterator().next());
            }
            isTrue(!Files.exists(root), "nothing written");
        }
    }

    /** One JVM task's write into {@code root}, then the decision, LOG_ID, schema.arrow and a
     *  checkpoint of {@code log} made as the JVM driver makes them, all with {@link #MODES}
     *  registered for the root (the task registers them; so does the driver, JournalWrite). */
    private static void writeAndCommit(Path root, Path logPath, String query) throws Exception {
        TaskWrite.Plan plan = new TaskWrite.Plan(root.toString(), MODES, logPath.toString(), null,
                query, 0);
        Map<String, Object> message = TaskWrite.run(plan, new TaskWrite.Identity(0, 0, 1),
                List.of(body()).iterator(), "1");
        isTrue(message != null && message.get("tx") != null, "the task wrote: " + message);
        DiskModes.use(root, DiskModes.fromOptions(MODES));
        CommitLog log = new CommitLog(logPath.toString());
        CommitLogWriter writer = new CommitLogWriter(log);
        writer.logId();
        writer.writeSchema(new Schema(List.of(Field.nullable("a", new ArrowType.Int(64, true)))));
        DriverCommit.commit(log, query, 0, List.of(message));
        LogMaintenance.Result made = LogMaintenance.maintain(log, 100, Long.MAX_VALUE / 4);
        isTrue(made.checkpoint() != null, "a checkpoint was made: " + made.line());
    }

    /** A body's bytes: what they hold does not matter here, where only modes are looked at. */
    private static TaskWrite.Body body() {
        return new TaskWrite.Body(ByteBuffer.wrap(new byte[100]), 1, 100);
    }

    /** {path relative to the root ("" for the root): its permissions as rwx text}. */
    private static Map<String, String> modesUnder(Path root) throws Exception {
        Map<String, String> found = new TreeMap<>();
        try (Stream<Path> all = Files.walk(root)) {
            for (Path each : all.toList()) {
                found.put(root.relativize(each).toString(),
                        PosixFilePermissions.toString(Files.getPosixFilePermissions(each)));
            }
        }
        return found;
    }
}
