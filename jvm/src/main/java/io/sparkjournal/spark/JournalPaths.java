package io.sparkjournal.spark;

import io.sparkjournal.events.RootLanes;
import io.sparkjournal.journal.DiskModes;
import java.nio.file.Path;
import java.util.Map;

/**
 * Journal paths as the driver resolves them, as every driver does:
 * {@code {host}} is this machine's host name, {@code {executor}} is
 * {@code driver}; the commit log defaults to {@code <root>/_commits}.
 */
final class JournalPaths {

    static final String[] PLACEHOLDERS = {"{host}", "{executor}"};

    private JournalPaths() {
    }

    /** The commit log's folder: the commitLog option (a local path or file: URI), else the default. */
    static String logBase(ReadOptions options) {
        String given = options.commitLog();
        if (given == null) {
            return resolveRoot(options.path()) + "/_commits";
        }
        if (given.startsWith("file://")) {
            return given.substring("file://".length());
        }
        if (given.contains("://")) {
            throw new OptionException("option commitLog=" + given + " is not valid for the JVM reader: it reads "
                    + "commit logs on local paths (or file: URIs) only; the Python reader reaches others");
        }
        return Path.of(given).toAbsolutePath().normalize().toString();
    }

    /** The node root this driver uses for {@code path}. */
    static String resolveRoot(String path) {
        String resolved = path.replace("{host}", RootLanes.hostName()).replace("{executor}", "driver");
        if (resolved.contains("{") || resolved.contains("}")) {
            throw new OptionException("journal path '" + path + "' holds an unknown placeholder; the known ones "
                    + "are {host}, {executor}");
        }
        return Path.of(resolved).toAbsolutePath().normalize().toString();
    }

    /**
     * Folders and files this driver creates under the node root of
     * {@code path} (the commit log under it: entries, LOG_ID, schema.arrow,
     * checkpoints) get the dirMode and fileMode of {@code journal} (resolved
     * options), as Python's committer registers its root ({@link DiskModes#use});
     * called before each write of a JVM write's driver, so a write of other
     * modes in between does not decide them.
     */
    static void useModes(String path, Map<String, ?> journal) {
        DiskModes.use(Path.of(resolveRoot(path)), DiskModes.fromOptions(journal));
    }

}
