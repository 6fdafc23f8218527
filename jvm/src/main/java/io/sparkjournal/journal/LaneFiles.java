package io.sparkjournal.journal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.regex.Pattern;
import java.util.Set;

/**
 * Which data files a lane holds right now (FORMAT.md, "Compaction" and
 * "Reading: where data ends"),
 * as paths in the order the loader opens them; the order of the log is the
 * file id in each header, never the name (LaneLoader sorts by it).
 *
 * <ul>
 *   <li>Without a control file: every {@code data-*.sjd} in the folder, by
 *       name.</li>
 *   <li>With {@code compact.ctl}: the compaction it records has happened,
 *       whatever step its swap reached. Its old files are left out; every
 *       other data file comes by name; then each new file, by name, is read as
 *       {@code <name>.cmp} while that exists, else as {@code <name>}. A new
 *       file found under neither name is damage (CorruptJournalException
 *       naming {@code <name>}, offset 0). A damaged control file fails the
 *       listing (ControlFile).</li>
 * </ul>
 * Names are compared by Unicode code point ({@link CodePoints}). Nothing
 * is changed on disk; {@code .cmp} files without a control file are debris
 * and are not read.
 */
public final class LaneFiles {

    /** A data file's name: "data-" + a number + ".sjd" (the number only makes it unique). */
    public static final String DATA_PREFIX = "data-";
    public static final String DATA_SUFFIX = ".sjd";
    /** A compacted file waiting for its swap. */
    public static final String COMPACTING_SUFFIX = ".cmp";
    /** A lane folder's name in a node root, "lane-" + at least three digits (its number,
     *  group 1), as journal/lanes.py's LANE. */
    public static final Pattern LANE_FOLDER = Pattern.compile("^lane-(\\d{3,})$");

    private final List<Path> paths;
    private final ControlFile pendingSwap;

    private LaneFiles(List<Path> paths, ControlFile pendingSwap) {
        this.paths = Collections.unmodifiableList(paths);
        this.pendingSwap = pendingSwap;
    }

    /** Lists the lane at {@code lane} (see the class). */
    public static LaneFiles list(Path lane) throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(lane)) {
            for (Path entry : entries) {
                names.add(entry.getFileName().toString());
            }
        }
        names.sort(CodePoints::compare);
        ControlFile control = names.contains(ControlFile.NAME) ? ControlFile.read(lane) : null;
        List<Path> paths = new ArrayList<>();
        if (control == null) {
            for (String name : names) {
                if (isDataFileName(name)) {
                    paths.add(lane.resolve(name));
                }
            }
            return new LaneFiles(paths, null);
        }
        Set<String> present = new HashSet<>(names);
        Set<String> oldNames = new HashSet<>(control.oldNames());
        for (String name : names) {
            if (isDataFileName(name) && !oldNames.contains(name)) {
                paths.add(lane.resolve(name));
            }
        }
        List<String> newNames = new ArrayList<>(new HashSet<>(control.newNames()));
        newNames.sort(CodePoints::compare);
        for (String name : newNames) {
            if (present.contains(name + COMPACTING_SUFFIX)) {
                paths.add(lane.resolve(name + COMPACTING_SUFFIX));
            } else if (present.contains(name)) {
                paths.add(lane.resolve(name));
            } else {
                throw new CorruptJournalException(lane.resolve(name).toString(), 0,
                        "the compaction recorded in " + ControlFile.NAME + " wrote this file, but"
                        + " neither it nor " + name + COMPACTING_SUFFIX + " exists");
            }
        }
        return new LaneFiles(paths, control);
    }

    /** The data files to open, in listing order (not log order). */
    public List<Path> paths() {
        return paths;
    }

    /** The committed compaction whose swap is not finished, or null. */
    public ControlFile pendingSwap() {
        return pendingSwap;
    }

    /** True for {@code data-*.sjd} (also the old and new names in a control file). */
    public static boolean isDataFileName(String name) {
        return name.startsWith(DATA_PREFIX) && name.endsWith(DATA_SUFFIX);
    }

}
