package io.sparkjournal.journal;

import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;

import io.sparkjournal.TempFolder;
import java.nio.file.Files;
import java.nio.file.Path;

/** {@link WriterProbe} finds a lane's writer in a lock table as /proc/locks writes it. */
public final class WriterProbeTest {

    private WriterProbeTest() {
    }

    /** The kernel's device numbers are 12-bit majors and 20-bit minors, all /proc/locks shows. */
    public static void testMajorAndMinorSplitALinuxDeviceNumber() {
        long[][] cases = {{8, 1}, {259, 0x12345}, {0xfff, 0xfffff}, {0xabc, 0x100}, {0, 0}};
        for (long[] c : cases) {
            long dev = makedev(c[0], c[1]);
            equal(c[0], WriterProbe.major(dev), "major of " + Long.toHexString(dev));
            equal(c[1], WriterProbe.minor(dev), "minor of " + Long.toHexString(dev));
        }
        equal(0x801L, makedev(8, 1), "makedev(8, 1)");
    }

    public static void testAHolderOfTheLockFileCountsAsAliveAndABlockedWaiterDoesNot()
            throws Exception {
        try (TempFolder temp = new TempFolder()) {
            Path lane = temp.path().resolve("lane");
            Files.createDirectories(lane);
            Path table = temp.path().resolve("locks");
            isTrue(!WriterProbe.held(lane.resolve(WriterProbe.LOCK_FILE), table),
                    "a lane without a lock file has a writer");
            Path lock = Files.createFile(lane.resolve(WriterProbe.LOCK_FILE));
            String id = deviceAndInode(lock);
            Files.writeString(table, "1: POSIX  ADVISORY  WRITE 4242 " + id + " 0 EOF\n");
            isTrue(WriterProbe.held(lock, table), "a POSIX holder was not seen");
            Files.writeString(table, "1: OFDLCK ADVISORY  WRITE -1 " + id + " 0 EOF\n");
            isTrue(WriterProbe.held(lock, table), "an OFD holder was not seen");
            Files.writeString(table, "1: POSIX  ADVISORY  WRITE 4242 " + id + "1 0 EOF\n"
                    + "2: FLOCK  ADVISORY  WRITE 4243 00:00:1 0 EOF\n"
                    + "3: -> FLOCK  ADVISORY  WRITE 4244 " + id + " 0 EOF\n");
            isTrue(!WriterProbe.held(lock, table), "another inode or a blocked waiter counted");
            Files.writeString(table, "");
            isTrue(WriterProbe.held(lock, table), "an empty (hidden) lock table counted as no writer");
        }
    }

    /** Linux's makedev: the inverse of major/minor, written out independently. */
    private static long makedev(long major, long minor) {
        return ((major & 0xfffff000L) << 32) | ((major & 0xfffL) << 8)
                | ((minor & 0xffffff00L) << 12) | (minor & 0xffL);
    }

    /** MAJOR:MINOR:INODE of {@code file} as /proc/locks prints it. */
    private static String deviceAndInode(Path file) throws Exception {
        long dev = ((Number) Files.getAttribute(file, "unix:dev")).longValue();
        long ino = ((Number) Files.getAttribute(file, "unix:ino")).longValue();
        return String.format("%02x:%02x:%d", WriterProbe.major(dev), WriterProbe.minor(dev), ino);
    }
}
