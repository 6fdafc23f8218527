package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who may touch a journal, the JVM's side of Python's io/modes.py: the
 * permission bits of the folders and files a JVM writer creates in a journal
 * (FORMAT.md, "A journal (lane) directory"; the options dirMode and fileMode),
 * and the folder sync that makes a create, rename or removal in a folder
 * durable.
 *
 * <p>Contract (io/modes.py's): every folder and file a JVM writer creates (a
 * root and its missing parents, lanes, data files and their {@code .tmp},
 * {@code journal.lock}, {@code files.lock}, {@code NODE_ID} and its temporary
 * file, and the commit log's folders, entries, {@code LOG_ID},
 * {@code schema.arrow}, commit times, checkpoints and {@code checkpoint.lock})
 * is made with the modes {@link #forPath} gives its path: those registered
 * ({@link #use}) for the nearest enclosing folder, else {@link #DEFAULTS}
 * (0750 / 0640). The modes are asked of the kernel at creation (mkdir, open
 * with O_CREAT), so the umask still applies; an existing file or folder is
 * never chmod-ed. A JVM task registers its node root with the journal options
 * of its write ({@code TaskWrite}), a JVM driver its root
 * ({@code JournalWrite}), as Python's writers and committer register theirs;
 * so a commit log under the root gets the journal's modes, one elsewhere the
 * defaults (as in Python). The registry is this JVM's: the last registration
 * of a folder wins, and a stand-alone tool that registers nothing uses the
 * defaults.
 *
 * @param dirMode  folders' permission bits: at most 0777, with rwx for the owner, no write for others
 * @param fileMode files' permission bits: at most 0777, with rw for the owner, no write for others
 */
public record DiskModes(int dirMode, int fileMode) {

    /** The options' defaults (config.py): folders 0750, files 0640. */
    public static final DiskModes DEFAULTS = new DiskModes(0750, 0640);

    private static final Map<Path, DiskModes> REGISTERED = new ConcurrentHashMap<>();

    public DiskModes {
        check("dirMode", dirMode, 0700);
        check("fileMode", fileMode, 0600);
    }

    /** The modes of resolved journal options (integers, as config.load_config resolves them);
     *  an option not given takes its default. IllegalArgumentException for another value. */
    public static DiskModes fromOptions(Map<String, ?> resolved) {
        return new DiskModes(bits(resolved, "dirMode", DEFAULTS.dirMode),
                bits(resolved, "fileMode", DEFAULTS.fileMode));
    }

    /** Folders and files created at or below {@code folder} get {@code modes} (see the class). */
    public static void use(Path folder, DiskModes modes) {
        REGISTERED.put(folder.toAbsolutePath().normalize(), modes);
    }

    /** The modes of something created at {@code path}: those of the nearest registered
     *  enclosing folder (the path itself included), else {@link #DEFAULTS}. */
    public static DiskModes forPath(Path path) {
        for (Path here = path.toAbsolutePath().normalize(); here != null; here = here.getParent()) {
            DiskModes found = REGISTERED.get(here);
            if (found != null) {
                return found;
            }
        }
        return DEFAULTS;
    }

    /** The attribute a folder at {@code path} is created with ({@link #forPath}'s dirMode). */
    public static FileAttribute<Set<PosixFilePermission>> folderAttribute(Path path) {
        return attribute(forPath(path).dirMode);
    }

    /** The attribute a file at {@code path} is created with ({@link #forPath}'s fileMode). */
    public static FileAttribute<Set<PosixFilePermission>> fileAttribute(Path path) {
        return attribute(forPath(path).fileMode);
    }

    /**
     * Creates {@code path} and its missing parents, each with the dirMode of
     * its own path (io/modes.py's make_dirs: a parent above a registered root
     * gets the modes of its own enclosing folders); an existing folder is left
     * as it is, as is one another process makes meanwhile.
     */
    public static void makeDirs(Path path) throws IOException {
        Path folder = path.toAbsolutePath().normalize();
        if (Files.isDirectory(folder)) {
            return;
        }
        Path parent = folder.getParent();
        if (parent != null) {
            makeDirs(parent);
        }
        try {
            makeDir(folder);
        } catch (FileAlreadyExistsException raced) {
            if (!Files.isDirectory(folder)) {
                throw raced;
            }
        }
    }

    /** One folder with its dirMode; FileAlreadyExistsException if something is there
     *  ({@code mkdir} is atomic: of racing creators one makes it). */
    public static void makeDir(Path path) throws IOException {
        Files.createDirectory(path, folderAttribute(path));
    }

    /** Makes creates, renames and removals in {@code folder} durable (fsync of the folder). */
    public static void syncFolder(Path folder) throws IOException {
        try (FileChannel dir = FileChannel.open(folder, StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException failed) {
            throw new IOException("syncing the directory " + folder + ": " + failed, failed);
        }
    }

    /** config_keys.Mode's checks: permission bits only, the owner's needs, no write for others. */
    private static void check(String option, long bits, int owner) {
        if (bits < 0 || bits > 0777 || (bits & owner) != owner || (bits & 02) != 0) {
            throw new IllegalArgumentException("option " + option + " = 0" + Long.toOctalString(bits)
                    + " is refused: it accepts octal permission bits with at least 0"
                    + Integer.toOctalString(owner) + " for the owner and no write for others (o-w)");
        }
    }

    private static int bits(Map<String, ?> resolved, String option, int fallback) {
        Object value = resolved.get(option);
        if (value == null) {
            return fallback;
        }
        if (value instanceof Number number && !(value instanceof Double || value instanceof Float)) {
            check(option, number.longValue(), option.equals("dirMode") ? 0700 : 0600);
            return number.intValue();
        }
        throw new IllegalArgumentException("option " + option + " = " + value + " is not resolved"
                + " permission bits: the JVM takes option values as sparkjournal.config.load_config"
                + " resolves them (an integer), never their text");
    }

    private static FileAttribute<Set<PosixFilePermission>> attribute(int bits) {
        StringBuilder text = new StringBuilder(9);
        String letters = "rwxrwxrwx";
        for (int bit = 0; bit < 9; bit++) {
            text.append((bits & (0400 >> bit)) != 0 ? letters.charAt(bit) : '-');
        }
        return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(text.toString()));
    }
}
