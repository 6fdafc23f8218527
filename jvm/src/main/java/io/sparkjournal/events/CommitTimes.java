package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import io.sparkjournal.format.FormatVersionException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.zip.CRC32C;

/**
 * The commit times of folded batches (COMMIT_LOG.md, "Commit times"): segment
 * {@code B div 16384} of a query is {@code <log>/_times/<query>/<segment, 20
 * digits>.times}, little-endian:
 *
 * <pre>
 *   0   4   magic "SJCT"
 *   4   4   format, 1
 *   8   8   first batch of the segment (segment * 16384)
 *   16  4   n, the number of slots (1..16384)
 *   20  8n  committed_at_ms of batch first + i, or -1: not decided
 *   20+8n 4 CRC-32C of every byte before it
 * </pre>
 *
 * A missing segment, a slot past n and a slot of -1 are "not decided" (null).
 * A segment whose magic, size, first batch or CRC is wrong is damage: a
 * {@link CommitLogException} naming the file; a format above 1 is a
 * {@link FormatVersionException}. Segments are only ever extended, so the
 * last {@value #CACHED} read are kept (least recently used dropped) and one is
 * read again only when a batch past its n is asked for. Thread-safe.
 * A checkpoint writer extends them with {@link #extend} ({@link #encode}:
 * COMMIT_LOG.md, "Commit times") before the checkpoint that covers their batches.
 */
public final class CommitTimes {

    public static final String FOLDER = Constants.Paths.TIMES;
    public static final int SLOTS = 16384;
    public static final int FORMAT = 1;
    static final int CACHED = 16;
    /** A segment's first four bytes, the declared tag, read as a little-endian u32. */
    private static final int MAGIC = ByteBuffer.wrap(Constants.Magics.COMMIT_TIMES
            .getBytes(StandardCharsets.US_ASCII)).order(ByteOrder.LITTLE_ENDIAN).getInt();
    private static final int HEAD = 20;

    private final String base;
    private final Map<String, long[]> segments = new LinkedHashMap<>(CACHED * 2, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, long[]> eldest) {
            return size() > CACHED;
        }
    };

    /** The commit times of the log whose folder is {@code base}. */
    public CommitTimes(String base) {
        this.base = base;
    }

    /** The path of {@code query}'s segment {@code segment}. */
    public String segmentPath(String query, long segment) throws EventsException {
        return base + "/" + FOLDER + "/" + CommitLog.safeName(query) + "/" + String.format("%020d", segment)
                + ".times";
    }

    /** When {@code batch} of {@code query} was committed (ms since the epoch), or null if not decided. */
    public Long committedAtMs(String query, long batch) throws EventsException, FormatVersionException {
        if (batch < 0) {
            return null;
        }
        long segment = batch / SLOTS;
        int slot = (int) (batch % SLOTS);
        String path = segmentPath(query, segment);
        long[] slots;
        synchronized (segments) {
            slots = segments.get(path);
        }
        if (slots == null || slot >= slots.length) {
            slots = read(path, segment);
            if (slots == null) {
                return null;
            }
            synchronized (segments) {
                segments.put(path, slots);
            }
        }
        return slot < slots.length && slots[slot] != -1 ? slots[slot] : null;
    }

    private static long[] read(String path, long segment) throws CommitLogException, FormatVersionException {
        byte[] raw;
        try {
            raw = Files.readAllBytes(Paths.get(path));
        } catch (NoSuchFileException absent) {
            return null;
        } catch (IOException error) {
            throw new CommitLogException("cannot read commit-time segment " + path + ": " + error, error);
        }
        return parse(raw, path, segment);
    }

    /** The slots of segment {@code segment} held by {@code raw}; {@code path} names it in errors. */
    static long[] parse(byte[] raw, String path, long segment) throws CommitLogException, FormatVersionException {
        ByteBuffer bytes = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        if (raw.length < 8 || bytes.getInt(0) != MAGIC) {
            throw damaged(path, "it does not start with " + Constants.Magics.COMMIT_TIMES);
        }
        long format = Integer.toUnsignedLong(bytes.getInt(4));
        if (format > FORMAT) {
            throw new FormatVersionException("commit-time segment", path, format, FORMAT);
        }
        if (format != FORMAT) {
            throw damaged(path, "format " + format + ", expected " + FORMAT);
        }
        if (raw.length < HEAD + 4) {
            throw damaged(path, "it is " + raw.length + " bytes, too short for its header");
        }
        long n = Integer.toUnsignedLong(bytes.getInt(16));
        if (n < 1 || n > SLOTS) {
            throw damaged(path, "it has " + n + " slots, not 1.." + SLOTS);
        }
        if (raw.length != HEAD + 8 * n + 4) {
            throw damaged(path, "it is " + raw.length + " bytes, " + (HEAD + 8 * n + 4) + " for " + n + " slots");
        }
        CRC32C crc = new CRC32C();
        crc.update(raw, 0, raw.length - 4);
        if ((int) crc.getValue() != bytes.getInt(raw.length - 4)) {
            throw damaged(path, "its CRC-32C does not match its bytes");
        }
        long first = bytes.getLong(8);
        if (first != segment * SLOTS) {
            throw damaged(path, "its first batch is " + Long.toUnsignedString(first) + ", expected "
                    + segment * SLOTS);
        }
        long[] slots = new long[(int) n];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = bytes.getLong(HEAD + 8 * i);
        }
        return slots;
    }

    /**
     * Writes {@code decided} (batch: committed_at_ms) into {@code query}'s
     * segments, each segment read (uncached) and rewritten whole, extended
     * only, the slots between left -1 (COMMIT_LOG.md, "Commit times").
     * Crash behaviour: each segment is replaced atomically
     * ({@link CommitLogWriter#replace}); a crash leaves some extended and no
     * checkpoint yet covering them, which no reader asks (the next writer
     * rewrites them).
     */
    void extend(String query, Map<Long, Long> decided) throws EventsException, FormatVersionException {
        Map<Long, NavigableMap<Integer, Long>> bySegment = new TreeMap<>();
        decided.forEach((batch, at) -> bySegment.computeIfAbsent(batch / SLOTS, s -> new TreeMap<>())
                .put((int) (batch % SLOTS), at));
        for (Map.Entry<Long, NavigableMap<Integer, Long>> segment : bySegment.entrySet()) {
            String path = segmentPath(query, segment.getKey());
            long[] old = read(path, segment.getKey());
            int had = old == null ? 0 : old.length;
            long[] slots = Arrays.copyOf(old == null ? new long[0] : old,
                    Math.max(had, segment.getValue().lastKey() + 1));
            Arrays.fill(slots, had, slots.length, -1);
            segment.getValue().forEach((slot, at) -> slots[slot] = at);
            try {
                CommitLogWriter.replace(Paths.get(path), encode(segment.getKey() * SLOTS, slots));
            } catch (IOException error) {
                throw new CommitLogException("cannot write commit-time segment " + path + ": " + error, error);
            }
        }
        synchronized (segments) {
            segments.clear();
        }
    }

    /** The bytes of a segment whose first batch is {@code first} holding {@code slots}. */
    static byte[] encode(long first, long[] slots) {
        ByteBuffer bytes = ByteBuffer.allocate(HEAD + 8 * slots.length + 4).order(ByteOrder.LITTLE_ENDIAN);
        bytes.putInt(MAGIC).putInt(FORMAT).putLong(first).putInt(slots.length);
        for (long slot : slots) {
            bytes.putLong(slot);
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes.array(), 0, bytes.position());
        bytes.putInt((int) crc.getValue());
        return bytes.array();
    }

    private static CommitLogException damaged(String path, String why) {
        return new CommitLogException("commit-time segment " + path + " is damaged (" + why + "); restore it "
                + "from a backup, or read with skipCorrupt=true to leave _commit_time null for its batches");
    }
}
