package io.sparkjournal.spark;

import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Every node root of a journal path visible from here: the path itself when it has no
 * placeholder, else every folder matching it with each placeholder as a
 * wildcard of one path segment, sorted.
 */
final class NodeRoots {

    private NodeRoots() {
    }

    static List<Path> visible(String path) {
        boolean placeholders = false;
        String pattern = path;
        for (String placeholder : JournalPaths.PLACEHOLDERS) {
            placeholders |= pattern.contains(placeholder);
            pattern = pattern.replace(placeholder, "*");
        }
        Path absolute = Path.of(pattern).toAbsolutePath().normalize();
        List<Path> found = new ArrayList<>();
        if (!placeholders) {
            if (Files.isDirectory(absolute)) {
                found.add(absolute);
            }
            return found;
        }
        Path base = absolute.getRoot();
        int fixed = 0;
        while (fixed < absolute.getNameCount() && !absolute.getName(fixed).toString().contains("*")) {
            base = base.resolve(absolute.getName(fixed));
            fixed++;
        }
        int depth = absolute.getNameCount() - fixed;
        PathMatcher matcher = FileSystems.getDefault().getPathMatcher("glob:" + absolute);
        if (!Files.isDirectory(base)) {
            return found;
        }
        try (Stream<Path> walk = Files.walk(base, depth)) {
            walk.filter(p -> p.getNameCount() == absolute.getNameCount() && matcher.matches(p)
                    && Files.isDirectory(p)).sorted().forEach(found::add);
        } catch (IOException unreadable) {
            return found;
        }
        return found;
    }
}
