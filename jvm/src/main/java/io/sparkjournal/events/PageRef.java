package io.sparkjournal.events;

import io.sparkjournal.format.Constants;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.journal.Shown;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * A PAGE record (EVENTS.md, "PAGE records"; user type {@link UserTypes#PAGE}): one
 * page file in the lane's {@code pages/} folder that replaced stored records,
 * made visible by one committed transaction (the PAGE record and a DELETE of
 * every record moved). The body, little-endian:
 *
 * <pre>
 * offset size field
 *  0      4   magic "SJPG"
 *  4      1   version, 1
 *  5      1   flags, 0 (not checked)
 *  6      2   n, the length of the file name (u16)
 *  8      8   the page file's size in bytes (u64)
 * 16      4   CRC-32C of the whole page file (u32)
 * 20      4   m, the number of records moved (u32)
 * 24      8   rows in the page (u64)
 * 32      8   lowest record id moved (u64)
 * 40      8   highest record id moved (u64)
 * 48      8   lowest _batch_id (i64; -1 when unknown)
 * 56      8   highest _batch_id (i64; -1 when unknown)
 * 64      8   earliest _commit_time, us since the epoch (i64; -1 when unknown)
 * 72      8   latest _commit_time (i64; -1 when unknown)
 * 80      n   file name, UTF-8, page-[0-9a-z-]+.parquet
 * 80+n   8m   the record ids moved (u64), ascending
 * </pre>
 *
 * Magic "SJPG" with a version above 1 is *newer-format*
 * ({@link FormatVersionException}), checked before the rest (EVENTS.md, "PAGE
 * records", reader requirements). Damage, each a {@link PageRecordException}
 * (EVENTS.md's kind; the message is this implementation's own): a body
 * shorter than its header, another magic or version 0, a length other than
 * the header announces, a name that is not UTF-8 or not of the form, record
 * ids not strictly ascending (as u64) or none, a lowest/highest id that
 * disagrees with the list.
 */
public final class PageRef {

    public static final byte[] MAGIC = Constants.Magics.PAGE.getBytes(StandardCharsets.US_ASCII);
    public static final String PAGES = Constants.Paths.PAGES;
    public static final int HEAD_SIZE = 80;
    /** A page file's name (EVENTS.md, "PAGE records and page files"). */
    static final Pattern NAME = Pattern.compile("page-[0-9a-z-]+\\.parquet");

    private final String name;
    private final long size;
    private final long crc32c;
    private final long rows;
    private final long[] recordIds;
    private final long[] batchRange;
    private final long[] timeRange;

    private PageRef(String name, long size, long crc32c, long rows, long[] recordIds,
                    long[] batchRange, long[] timeRange) {
        this.name = name;
        this.size = size;
        this.crc32c = crc32c;
        this.rows = rows;
        this.recordIds = recordIds;
        this.batchRange = batchRange;
        this.timeRange = timeRange;
    }

    /** {@link #decode(ByteBuffer, String)} of a record named "a PAGE record". */
    public static PageRef decode(ByteBuffer body) throws PageRecordException, FormatVersionException {
        return decode(body, "a PAGE record");
    }

    /**
     * The page a PAGE record's body (position to limit) names;
     * {@code where} names the record in a FormatVersionException
     * ("record 12 of lane /x/lane-000").
     */
    public static PageRef decode(ByteBuffer body, String where) throws PageRecordException, FormatVersionException {
        ByteBuffer raw = body.slice().order(ByteOrder.LITTLE_ENDIAN);
        int length = raw.remaining();
        if (length >= 5 && (raw.get(4) & 0xff) > 1) {
            byte[] head = new byte[4];
            raw.get(0, head);
            if (java.util.Arrays.equals(head, MAGIC)) {
                throw new FormatVersionException("PAGE record", where, raw.get(4) & 0xff, 1);
            }
        }
        if (length < HEAD_SIZE) {
            throw new PageRecordException("a PAGE record of " + length
                    + " bytes is shorter than its header");
        }
        byte[] magic = new byte[4];
        raw.get(0, magic);
        int version = raw.get(4) & 0xff;
        if (!java.util.Arrays.equals(magic, MAGIC) || version != 1) {
            throw new PageRecordException("not a version 1 PAGE record (magic "
                    + Shown.bytes(magic) + ", version " + version + ")");
        }
        int nameLength = raw.getShort(6) & 0xffff;
        long count = raw.getInt(20) & 0xffffffffL;
        if (length != HEAD_SIZE + nameLength + 8 * count) {
            throw new PageRecordException("a PAGE record of " + length + " bytes does not hold "
                    + "the name of " + nameLength + " bytes and " + count
                    + " record ids it announces");
        }
        String name;
        try {
            name = StandardCharsets.UTF_8.newDecoder()
                    .decode(raw.duplicate().position(HEAD_SIZE).limit(HEAD_SIZE + nameLength))
                    .toString();
        } catch (CharacterCodingException notUtf8) {
            throw new PageRecordException("the file name of a PAGE record is not UTF-8", notUtf8);
        }
        long[] ids = new long[(int) count];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = raw.getLong(HEAD_SIZE + nameLength + 8 * i);
        }
        PageRef ref = new PageRef(name, raw.getLong(8), raw.getInt(16) & 0xffffffffL,
                raw.getLong(24), ids, new long[] {raw.getLong(48), raw.getLong(56)},
                new long[] {raw.getLong(64), raw.getLong(72)});
        ref.check();
        long first = raw.getLong(32);
        long last = raw.getLong(40);
        if (ref.firstId() != first || ref.lastId() != last) {
            throw new PageRecordException("PAGE record of " + name + ": its record id range "
                    + Long.toUnsignedString(first) + ".." + Long.toUnsignedString(last)
                    + " disagrees with its record ids");
        }
        return ref;
    }

    /** The body's rules after its length (EVENTS.md, "PAGE records", reader requirements). */
    private void check() throws PageRecordException {
        if (!NAME.matcher(name).matches()) {
            throw new PageRecordException("page file name " + Shown.text(name)
                    + " is not of the form page-<id>.parquet");
        }
        boolean ascending = recordIds.length > 0;
        for (int i = 1; i < recordIds.length && ascending; i++) {
            ascending = Long.compareUnsigned(recordIds[i - 1], recordIds[i]) < 0;
        }
        if (!ascending) {
            throw new PageRecordException("page " + name + ": record ids must be ascending, "
                    + "without repeats, and not empty");
        }
    }

    /** The page file's name inside {@code pages/}. */
    public String name() {
        return name;
    }

    /** The page file's size in bytes (u64). */
    public long size() {
        return size;
    }

    /** The CRC-32C of the whole page file (u32). */
    public long crc32c() {
        return crc32c;
    }

    /** Rows in the page (u64). */
    public long rows() {
        return rows;
    }

    /** The ids of the records moved into the page, ascending as u64. */
    public long[] recordIds() {
        return recordIds.clone();
    }

    public long firstId() {
        return recordIds[0];
    }

    public long lastId() {
        return recordIds[recordIds.length - 1];
    }

    /** (lowest, highest) _batch_id; -1: unknown. */
    public long[] batchRange() {
        return batchRange.clone();
    }

    /** (earliest, latest) _commit_time in us since the epoch; -1: unknown. */
    public long[] timeRange() {
        return timeRange.clone();
    }

    /** The page file of lane {@code lane}. */
    public Path path(Path lane) {
        return lane.resolve(PAGES).resolve(name);
    }
}
