package io.sparkjournal.journal;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

/** {@link DiskModes}: io/modes.py's rules in the JVM (the nearest registered folder's modes,
 *  else the defaults; the umask still applies; refused values named). */
public final class DiskModesTest {

    private DiskModesTest() {
    }

    public static void testTheNearestRegisteredFolderDecidesElseTheDefaults() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path root = folder.path().resolve("root");
            Path lane = root.resolve("lane-000");
            equal(DiskModes.DEFAULTS, DiskModes.forPath(lane), "nothing registered");
            DiskModes.use(root, new DiskModes(0700, 0600));
            DiskModes.use(lane.resolve("large"), new DiskModes(0750, 0640));
            equal(new DiskModes(0700, 0600), DiskModes.forPath(lane.resolve("data-0000000001.sjd")),
                    "below the root");
            equal(new DiskModes(0700, 0600), DiskModes.forPath(root.resolve("x/../NODE_ID")),
                    "a path normalized");
            equal(new DiskModes(0750, 0640), DiskModes.forPath(lane.resolve("large/1.body")),
                    "the nearer registration");
            equal(DiskModes.DEFAULTS, DiskModes.forPath(folder.path().resolve("_commits")),
                    "beside the root");
            DiskModes.use(root, new DiskModes(0770, 0660));
            equal(new DiskModes(0770, 0660), DiskModes.forPath(lane), "the last registration wins");
        }
    }

    public static void testModesAreAskedAtCreationSoTheUmaskStillApplies() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            int umask = umask(folder.path());
            Path root = folder.path().resolve("root");
            DiskModes.use(root, DiskModes.fromOptions(Map.of("dirMode", 0770, "fileMode", 0660L)));
            DiskModes.makeDirs(root.resolve("lane-000"));
            Path file = root.resolve("lane-000").resolve("journal.lock");
            FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                    DiskModes.fileAttribute(file)).close();
            equal(0770 & ~umask, bits(root),
                    "the root, 0770 less the umask 0" + Integer.toOctalString(umask));
            equal(0770 & ~umask, bits(root.resolve("lane-000")), "the lane");
            equal(0660 & ~umask, bits(file), "a file, 0660 less the umask");
            Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx------"));
            DiskModes.makeDirs(root.resolve("lane-000"));
            equal(0700, bits(root), "an existing folder is never chmod-ed");
        }
    }

    public static void testValuesThatAreNotResolvedPermissionBitsAreRefused() {
        contains(raises(IllegalArgumentException.class,
                () -> DiskModes.fromOptions(Map.of("dirMode", 0777))).getMessage(),
                "option dirMode = 0777 is refused", "no write for others");
        contains(raises(IllegalArgumentException.class,
                () -> DiskModes.fromOptions(Map.of("fileMode", 0400))).getMessage(),
                "option fileMode = 0400 is refused", "at least 0600 for the owner");
        contains(raises(IllegalArgumentException.class,
                () -> DiskModes.fromOptions(Map.of("fileMode", 01640))).getMessage(),
                "option fileMode = 01640 is refused");
        contains(raises(IllegalArgumentException.class,
                () -> DiskModes.fromOptions(Map.of("dirMode", "0750"))).getMessage(),
                "option dirMode = 0750 is not resolved permission bits", "load_config");
        equal(DiskModes.DEFAULTS, DiskModes.fromOptions(Map.of()), "the defaults when not given");
        equal(new DiskModes(0750, 0640), DiskModes.DEFAULTS, "0750 / 0640");
    }

    /** This process's umask: what it takes from a file created 0777 in {@code folder}. */
    public static int umask(Path folder) throws Exception {
        Path probe = Files.createFile(folder.resolve("umask-probe"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwxrwx")));
        try {
            return 0777 & ~bits(probe);
        } finally {
            Files.delete(probe);
        }
    }

    public static int bits(Path path) throws Exception {
        String text = PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
        int bits = 0;
        for (int at = 0; at < 9; at++) {
            bits = bits << 1 | (text.charAt(at) == '-' ? 0 : 1);
        }
        return bits;
    }
}
