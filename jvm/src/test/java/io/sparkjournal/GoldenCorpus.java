package io.sparkjournal;

import static io.sparkjournal.Expect.isTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * A golden corpus under tests/golden/ as the Java tests find it: its folder
 * from the system property tests/test_jvm_unit.py sets, and its case folders
 * (each with an expected.json) by name.
 */
public final class GoldenCorpus {

    private GoldenCorpus() {
    }

    /** The corpus folder the system property {@code property} names ({@code relative}: where it lies in a checkout). */
    public static Path folder(String property, String relative) {
        String where = System.getProperty(property);
        isTrue(where != null, "-D" + property + "=<checkout>/" + relative + " is not set");
        Path folder = Paths.get(where);
        isTrue(Files.isDirectory(folder), property + " " + folder + " is not a folder");
        return folder;
    }

    /** The names of the case folders of {@code corpus} that {@code holds}, sorted; at least one. */
    public static List<String> cases(Path corpus, Predicate<Path> holds) throws IOException {
        try (Stream<Path> found = Files.list(corpus)) {
            List<String> names = found.filter(holds).map(path -> path.getFileName().toString()).sorted().toList();
            isTrue(!names.isEmpty(), "no case in " + corpus);
            return names;
        }
    }
}
