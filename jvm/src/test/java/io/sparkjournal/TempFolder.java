package io.sparkjournal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** A fresh folder under java.io.tmpdir, deleted with everything in it when closed. */
public final class TempFolder implements AutoCloseable {

    private final Path path;

    public TempFolder() throws IOException {
        path = Files.createTempDirectory("sparkjournal-unit-");
    }

    public Path path() {
        return path;
    }

    /** A copy of the tree at {@code source} made at {@code target}; returns {@code target}. */
    public static Path copyTree(Path source, Path target) throws IOException {
        try (Stream<Path> all = Files.walk(source)) {
            for (Path each : all.toList()) {
                Path to = target.resolve(source.relativize(each).toString());
                if (Files.isDirectory(each)) {
                    Files.createDirectories(to);
                } else {
                    Files.copy(each, to);
                }
            }
        }
        return target;
    }

    @Override
    public void close() throws IOException {
        try (Stream<Path> all = Files.walk(path)) {
            for (Path each : all.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(each);
            }
        }
    }
}
