package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.Map;

/**
 * A JVM task refuses to write into a root whose NODE_ID is a forgotten node
 * (Python's {@code refuse_forgotten_root}), before it opens a lane: nothing is
 * written, no lane folder made.
 */
public final class TaskWriteForgottenTest {

    static final String NODE = "n1@h1";

    private TaskWriteForgottenTest() {
    }

    public static void testATaskRefusesARootWhoseNodeIsForgotten() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path root = folder.path().resolve("root");
            Path log = folder.path().resolve("_commits");
            Files.createDirectories(root);
            Files.writeString(root.resolve(NodeIds.FILE), NODE + "\n");
            ForgottenNodeTest.write(log, NODE + ".json", ForgottenNodeTest.record(NODE));
            TaskWrite.Plan plan = new TaskWrite.Plan(root.toString(), Map.of(), log.toString(), null, "q", 0);
            TaskWrite.SinkTaskException refused = raises(TaskWrite.SinkTaskException.class,
                    () -> TaskWrite.run(plan, new TaskWrite.Identity(0, 0, 1), Collections.emptyIterator(), "1"));
            contains(refused.getMessage(), "batch 0 of query q on host ",
                    "root " + root + " carries NODE_ID " + NODE + ", which an operator forgot",
                    "--restore " + NODE);
            isTrue(!Files.exists(root.resolve("lane-000")), "a lane was opened in the forgotten root");
        }
    }
}
