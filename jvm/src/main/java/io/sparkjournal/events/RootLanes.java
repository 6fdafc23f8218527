package io.sparkjournal.events;

import io.sparkjournal.journal.Shown;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.AppendConfig;
import io.sparkjournal.journal.CorruptJournalException;
import io.sparkjournal.journal.DiskModes;
import io.sparkjournal.journal.JournalException;
import io.sparkjournal.journal.LaneAppender;
import io.sparkjournal.journal.LaneWriterLock;
import io.sparkjournal.journal.PathOutsideException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The writer side of a node root (EVENTS.md, "A node root", writer
 * requirements): the root path with its placeholders
 * resolved, its NODE_ID (made once, crash-safe), and the first lane
 * {@code lane-NNN} whose one-writer lock ({@link LaneWriterLock}) is free,
 * opened with a {@link LaneAppender}.
 *
 * <p>Lane choice: lanes are tried in number order from {@code lane-000}; each
 * folder is made if missing ({@code mkdir} is atomic: of two processes racing
 * for a new lane one makes it, and the lock decides who writes it); a lane that
 * is a symbolic link is refused ({@link PathOutsideException}: the *outside*
 * kind of EVENTS.md, "A node root"). A lane this writer cannot append to is released and skipped for
 * the next, with a WARNING on the "sparkjournal.task" logger naming the lane
 * and why, so one bad lane never blocks a node's writes:
 * <ul>
 *   <li>a damaged lane ({@link CorruptJournalException}, EVENTS.md: a lane
 *       a writer cannot append to is skipped); it stays as it is, and readers fail on it (or leave its
 *       damaged files out under skipCorrupt) until it is repaired;</li>
 *   <li>a lane written by a newer sparkjournal ({@link FormatVersionException}),
 *       skipped likewise: the newer version goes on writing it,
 *       this one writes elsewhere, and a reader of this version fails on it;</li>
 *   <li>a lane refused for what only a Python writer does (a pending
 *       compaction swap, files to move to attic/: plain
 *       {@link JournalException}), which a Python writer's open fixes.</li>
 * </ul>
 * What is wrong with the root or the node rather than with one lane fails the
 * task: a lane that is a symbolic link, a folder of the lane leading out of it
 * (PathOutsideException), any other JournalException and any I/O error.
 * Each open of a skipped lane loads it again (and warns again): a JVM keeps
 * its writers across tasks ({@link LaneWriters}), so that is rare.
 *
 * <p>Modes: folders and files are made with the journal's dirMode and
 * fileMode (less the umask) that the caller registered for the root
 * ({@link DiskModes#use}; else 0750 / 0640); an existing folder or file keeps its own.
 *
 * <p>Crash behaviour: the writer lock dies with the process; a lane folder
 * made and never written is an empty lane (FORMAT.md); NODE_ID is
 * absent or whole (see {@link #nodeId}).
 */
public final class RootLanes {

    private static final Logger LOG = Logger.getLogger("sparkjournal.task");
    private static final Pattern WORKER_DIR = Pattern.compile("/app-[0-9]+-[0-9]+/([0-9]+)/?$");
    public static final int MAX_LANES = 1024;

    /** A lane held for writing: its node root, the lane's name, its lock and its appender.
     *  {@link #close} closes the appender (syncing it) and then releases the lock. */
    public record Opened(String node, Path root, String lane, LaneWriterLock lock,
                         LaneAppender appender) implements AutoCloseable {
        public Path directory() {
            return root.resolve(lane);
        }

        @Override
        public void close() throws IOException {
            try {
                appender.close();
            } finally {
                lock.close();
            }
        }
    }

    private RootLanes() {
    }

    /** The kernel's node name, the host a node id names (EVENTS.md, "A node root"). */
    public static String hostName() {
        try {
            String name = Files.readString(Paths.get("/proc/sys/kernel/hostname")).strip();
            if (!name.isEmpty()) {
                return name;
            }
        } catch (IOException | RuntimeException notLinux) {
            // fall through
        }
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException unknown) {
            return "localhost";
        }
    }

    /** The executor a root path's {executor} names: SPARK_EXECUTOR_ID, else the executor id in a
     *  standalone worker's folder ({@code work/app-.../<id>}), else "driver". In a Spark
     *  executor JVM, SparkEnv's executor id is the same thing. */
    public static String executorId() {
        String env = System.getenv("SPARK_EXECUTOR_ID");
        if (env != null && !env.isEmpty()) {
            return env;
        }
        Matcher match = WORKER_DIR.matcher(Paths.get("").toAbsolutePath().toString());
        return match.find() ? match.group(1) : "driver";
    }

    /** A root path with its placeholders {host} and {executor} resolved, absolute
     *  and normalized (not resolving links). EventsException for an unknown placeholder. */
    public static Path resolveRoot(String path, String host, String executor) throws EventsException {
        String resolved = path.replace("{host}", host).replace("{executor}", executor);
        if (resolved.contains("{") || resolved.contains("}")) {
            throw new EventsException("journal path " + Shown.text(path) + " holds an unknown "
                    + "placeholder; the known ones are {host}, {executor}");
        }
        return Paths.get(resolved).toAbsolutePath().normalize();
    }

    /**
     * The root's node id, made first if it has none (EVENTS.md, "A node root",
     * writer requirements):
     * "uuid hex@host" written and synced under a unique temporary name, then
     * hard-linked to NODE_ID (which fails if another process won the race: its
     * id is used), the temporary name removed and the folder synced. A crash
     * leaves no NODE_ID or a complete one, at worst a stray temporary file.
     */
    public static String nodeId(Path root, String host) throws IOException {
        String existing = NodeIds.read(root);
        if (existing != null) {
            return existing;
        }
        DiskModes.makeDirs(root);
        String ident = hex() + "@" + host;
        Path tmp = root.resolve("." + NodeIds.FILE + "." + hex() + ".tmp");
        try (FileChannel out = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW,
                StandardOpenOption.WRITE), DiskModes.fileAttribute(tmp))) {
            out.write(java.nio.ByteBuffer.wrap((ident + "\n").getBytes(StandardCharsets.UTF_8)));
            out.force(true);
        }
        try {
            Files.createLink(root.resolve(NodeIds.FILE), tmp);
        } catch (FileAlreadyExistsException raced) {
            // another process made it first: its id is the root's
        } finally {
            Files.deleteIfExists(tmp);
        }
        DiskModes.syncFolder(root);
        return NodeIds.read(root);
    }

    /**
     * Opens the first free lane of {@code root} (see the class; the caller made
     * sure the root exists, {@link #ensureRoot}). {@code node} is the root's id
     * ({@link #nodeId}). EventsException when all {@link #MAX_LANES} lanes have
     * a writer or are refused. Existing lanes {@code avoid} names are passed over
     * while a later lane (a new one at worst) can be had.
     */
    public static Opened openWriter(Path root, String node, AppendConfig config,
                                    java.util.function.Predicate<Path> avoid) throws IOException {
        for (int number = 0; number < MAX_LANES; number++) {
            String name = String.format("lane-%03d", number);
            Path lane = root.resolve(name);
            if (Files.isSymbolicLink(lane)) {
                throw new PathOutsideException("the lane " + name, name, root.toString(),
                        "lane " + Shown.text(lane.toString()) + " of the journal "
                        + Shown.text(root.toString()) + " is a symbolic link (to "
                        + Shown.text(Files.readSymbolicLink(lane).toString()) + "), which "
                        + "sparkjournal refuses: a lane must be a real folder. Replace the link "
                        + "by the folder it points to, or remove it");
            }
            try {
                DiskModes.makeDir(lane);
            } catch (FileAlreadyExistsException exists) {
                if (number + 1 < MAX_LANES && avoid.test(lane)) {
                    continue;                            // passed over while a later lane can be had
                }
                // an existing lane: its lock decides
            }
            LaneWriterLock lock = LaneWriterLock.tryAcquire(lane);
            if (lock == null) {
                continue;
            }
            try {
                return new Opened(node, root, name, lock, LaneAppender.open(lane, config));
            } catch (CorruptJournalException | FormatVersionException unusable) {
                lock.close();
                LOG.warning("lane " + lane + " skipped, this writer cannot append to it: "
                        + unusable.getMessage());
            } catch (JournalException refused) {
                lock.close();
                if (refused.getClass() != JournalException.class) {
                    throw refused;                       // a folder leading out: fail
                }
                LOG.warning("lane " + lane + " skipped, a Python writer must open it first: "
                        + refused.getMessage());
            } catch (IOException | RuntimeException | Error failed) {
                lock.close();
                throw failed;
            }
        }
        throw new EventsException("all " + MAX_LANES + " lanes of " + root + " have a writer (or "
                + "are damaged, or need a Python writer first: see the warnings); close some "
                + "writers or use another root");
    }

    /** Checks the root exists, making it (and its parents) if {@code createDirs}. */
    public static void ensureRoot(Path root, boolean createDirs) throws IOException {
        if (Files.isDirectory(root)) {
            return;
        }
        if (!createDirs) {
            throw new EventsException("journal root " + root + " does not exist and createDirs "
                    + "is false; create it or set createDirs=true");
        }
        DiskModes.makeDirs(root);
    }


    private static String hex() {
        return UUID.randomUUID().toString().replace("-", "");
    }
}
