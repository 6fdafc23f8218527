package io.sparkjournal.events;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.raises;

import io.sparkjournal.TempFolder;
import io.sparkjournal.format.FormatVersionException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * {@link CommitTimes} reads the commit-time segments COMMIT_LOG.md lays out,
 * and a {@link LogView} takes a batch's commit time from its entry, else from
 * its segment when the batch is folded; damage names the segment.
 */
public final class CommitTimesTest {

    private CommitTimesTest() {
    }

    public static void testTimesComeFromTheEntryElseFromTheSegmentOfAFoldedBatch() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            LogFiles.checkpoint(base, 0, "{'format': 1, 'seq': 0, 'written_at_ms': 1, 'queries': "
                    + "[{'query': 'q', 'through': 16385, 'decided': 16386, 'rows': 0, "
                    + "'last_committed_at_ms': 5}], 'lanes': [], 'nodes': []}");
            long[] first = new long[CommitTimes.SLOTS];
            Arrays.fill(first, 1000);
            first[7] = -1;                                      // a gap: never decided
            LogFiles.segment(base, "q", 0, first);
            LogFiles.segment(base, "q", 1, 2000, 2001);
            LogFiles.entry(base, "q", 16386, 3000);
            LogView view = new CommitLog(base.toString()).view();
            equal(1000L, view.committedAtMs("q", 0), "batch 0 from segment 0");
            equal(null, view.committedAtMs("q", 7), "a slot of -1");
            equal(2001L, view.committedAtMs("q", 16385), "batch 16385 from segment 1");
            equal(3000L, view.committedAtMs("q", 16386), "batch 16386 from its entry");
            equal(null, view.committedAtMs("q", 16387), "an undecided batch");
            equal(null, view.committedAtMs("other", 0), "a query without decisions");
        }
    }

    public static void testASegmentIsReadAgainWhenABatchPastItsSlotsIsAskedFor() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            CommitTimes times = new CommitTimes(folder.path().toString());
            equal(null, times.committedAtMs("q", 3), "a missing segment");
            LogFiles.segment(folder.path(), "q", 0, 10, 11);
            equal(11L, times.committedAtMs("q", 1), "batch 1");
            equal(null, times.committedAtMs("q", 2), "past the slots");
            LogFiles.segment(folder.path(), "q", 0, 10, 11, 12);
            equal(12L, times.committedAtMs("q", 2), "after the segment was extended");
        }
    }

    public static void testADamagedSegmentIsRefusedNamingIt() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path base = folder.path();
            Path file = LogFiles.segment(base, "q", 0, 10, 11);
            byte[] good = Files.readAllBytes(file);
            byte[] badCrc = good.clone();
            badCrc[22] ^= 1;
            byte[] badMagic = good.clone();
            badMagic[0] = 'X';
            byte[] cut = Arrays.copyOf(good, good.length - 1);
            byte[] wrongFirst = LogFiles.segmentBytes(1, 10, 11);
            for (byte[] raw : new byte[][] {badCrc, badMagic, cut, wrongFirst, new byte[0]}) {
                Files.write(file, raw);
                CommitTimes times = new CommitTimes(base.toString());
                contains(raises(CommitLogException.class, () -> times.committedAtMs("q", 1)).getMessage(),
                        file.toString(), "is damaged");
            }
            Files.write(file, badCrc);
            contains(raises(CommitLogException.class, () -> new CommitTimes(base.toString())
                    .committedAtMs("q", 0)).getMessage(), "CRC-32C");
        }
    }

    public static void testASegmentOfANewerFormatIsRefused() throws Exception {
        try (TempFolder folder = new TempFolder()) {
            Path file = LogFiles.segment(folder.path(), "q", 0, 10);
            byte[] raw = Files.readAllBytes(file);
            ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).putInt(4, 2);
            Files.write(file, raw);
            FormatVersionException refused = raises(FormatVersionException.class,
                    () -> new CommitTimes(folder.path().toString()).committedAtMs("q", 0));
            equal(file.toString(), refused.path(), "the refused segment");
        }
    }
}
