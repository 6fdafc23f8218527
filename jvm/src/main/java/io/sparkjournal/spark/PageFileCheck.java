package io.sparkjournal.spark;

import io.sparkjournal.events.PageRef;
import io.sparkjournal.format.Constants;
import io.sparkjournal.journal.SettledFile;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.zip.CRC32C;

import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.Util;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.schema.LogicalTypeAnnotation;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType.PrimitiveTypeName;
import org.apache.parquet.schema.Type;

/**
 * What a reader checks of a page file before Spark's Parquet reader sees a
 * byte of its data (EVENTS.md, "PAGE records and page files", reader
 * requirements): the whole file's CRC-32C is its PAGE record's, so Parquet
 * decoders only ever read bytes the PAGE record (inside a CRC-checked journal
 * record) vouches for, and no damage or tampering reaches them (a damaged
 * file could make a decoder fail with its own errors, or loop); then its
 * footer agrees with the PAGE record and the journal's columns, so no footer
 * can make the read leave rows out or read a column as nulls in silence.
 * Failures are {@link PageFileException}s naming the file and what differs.
 */
final class PageFileCheck {

    private PageFileCheck() {
    }

    /**
     * The CRC, then the footer, of page {@code ref}'s {@code file} ({@code size} bytes, its record's);
     * the CRC only where this JVM did not find the file, unchanged, holding it before
     * ({@link CheckedPages}). Returns the bytes read whole for the CRC (0 or {@code size}).
     */
    static long check(Path file, String where, PageRef ref, List<String> eventsColumns, long size)
            throws IOException {
        // the identity before the open: a file replaced in between is read now and known
        // by the old identity, which a later look at the new file does not match
        SettledFile identity = SettledFile.of(file);
        boolean checked = CheckedPages.contains(identity, ref.crc32c());
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            if (!checked) {
                checkCrc(channel, where, ref);
                CheckedPages.keep(identity, ref.crc32c());
            }
            checkFooter(channel, where, ref, eventsColumns, size);
        } catch (NoSuchFileException missing) {
            throw PageBatches.gone(where);
        }
        return checked ? 0 : size;
    }

    private static void checkCrc(FileChannel channel, String where, PageRef ref) throws IOException {
        CRC32C crc = new CRC32C();
        ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
        long at = 0;
        for (int read; (read = channel.read(buffer.clear(), at)) > 0; at += read) {
            crc.update(buffer.flip());
        }
        if (crc.getValue() != ref.crc32c()) {
            throw new PageFileException(where + ": its CRC-32C is " + String.format("%#010x", crc.getValue())
                    + ", its PAGE record says " + String.format("%#010x", ref.crc32c())
                    + ": it was changed after paging; restore it from a backup");
        }
    }

    /** The metadata columns a page file holds with their types; {@code _host} and {@code _lane} are optional. */
    private static final List<String> OWN = List.of(Constants.MetadataColumns.BATCH_ID,
            Constants.MetadataColumns.COMMIT_TIME, Constants.MetadataColumns.RECORD_ID,
            Constants.MetadataColumns.ROW);
    private static final Set<String> RESTATED = Set.of(Constants.MetadataColumns.HOST,
            Constants.MetadataColumns.LANE);
    private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);

    /**
     * Fails with a {@link PageFileException} naming the file and each
     * disagreement unless the Parquet footer of the file on {@code channel} ({@code size}
     * bytes) is as EVENTS.md requires of a page file (reader requirements,
     * "damaged"), read from the footer alone, no data: the footer's row count
     * and its row groups' sum both {@code ref}'s rows; no column named twice;
     * {@code _batch_id}, {@code _commit_time}, {@code _record_id},
     * {@code _row} present as int64, timestamp[us, UTC], int64, int32 (their
     * Parquet types: INT64 plain or signed 64-bit, INT64 TIMESTAMP(MICROS,
     * adjusted to UTC), INT32 plain or signed 32-bit; never repeated); the
     * other columns but {@code _host} and {@code _lane}, by name and in order,
     * a prefix of {@code eventsColumns}. A footer that does not parse is
     * damage too. The Python reader's check is page_scan.footer_problems.
     */
    private static void checkFooter(FileChannel channel, String where, PageRef ref, List<String> eventsColumns,
                                    long size) throws PageFileException {
        FileMetaData thrift;
        MessageType schema;
        try {
            if (size < 12) {
                throw new IOException("it is " + size + " bytes, shorter than any Parquet file");
            }
            ByteBuffer tail = readFully(channel, size - 8, 8).order(ByteOrder.LITTLE_ENDIAN);
            long length = tail.getInt(0) & 0xffffffffL;
            for (int i = 0; i < 4; i++) {
                if (tail.get(4 + i) != MAGIC[i]) {
                    throw new IOException("it does not end with PAR1");
                }
            }
            if (length > size - 12) {
                throw new IOException("its footer length " + length + " reaches past the file's start");
            }
            ByteBuffer footer = readFully(channel, size - 8 - length, (int) length);
            try {
                thrift = Util.readFileMetaData(new ByteArrayInputStream(footer.array()));
            } catch (OutOfMemoryError claimed) {
                // Thrift sizes a list by the count the footer claims before reading
                // it: a damaged count asks for one array no heap holds, refused
                // at once (nothing else was allocated). The footer is at most
                // the file's bytes, so a whole one never asks for that.
                throw new IOException("its footer claims a list larger than memory, from " + length
                        + " bytes");
            }
            schema = new ParquetMetadataConverter().fromParquetMetadata(thrift).getFileMetaData().getSchema();
        } catch (IOException | RuntimeException bad) {
            throw new PageFileException(where + " does not read as the page its PAGE record names: its Parquet "
                    + "footer does not decode (" + bad + "); restore it from a backup", bad);
        }
        List<String> problems = new ArrayList<>();
        long grouped = 0;
        for (RowGroup group : thrift.getRow_groups()) {
            grouped += group.getNum_rows();
        }
        if (thrift.getNum_rows() != ref.rows() || grouped != ref.rows()) {
            problems.add("its Parquet footer counts " + thrift.getNum_rows() + " rows (" + grouped
                    + " in its row groups), its PAGE record says " + Long.toUnsignedString(ref.rows()));
        }
        Set<String> seen = new HashSet<>();
        Set<String> twice = new LinkedHashSet<>();
        List<String> others = new ArrayList<>();
        for (Type field : schema.getFields()) {
            if (!seen.add(field.getName())) {
                twice.add(field.getName());
            }
            if (!OWN.contains(field.getName()) && !RESTATED.contains(field.getName())) {
                others.add(field.getName());
            }
        }
        if (!twice.isEmpty()) {
            problems.add("its footer names the column(s) " + String.join(", ", twice) + " more than once");
        }
        for (String name : OWN) {
            if (!schema.containsField(name)) {
                problems.add("it has no " + name + " column");
            } else if (!ownType(name, schema.getType(name))) {
                problems.add("its " + name + " column is " + schema.getType(name) + ", not "
                        + (name.equals(Constants.MetadataColumns.ROW) ? "int32" : name.equals(Constants.MetadataColumns.COMMIT_TIME)
                        ? "timestamp[us, UTC]" : "int64"));
            }
        }
        if (others.size() > eventsColumns.size() || !others.equals(eventsColumns.subList(0, others.size()))) {
            problems.add("its events columns (" + String.join(", ", others) + ") are not, in order, the first "
                    + "of the journal's (" + String.join(", ", eventsColumns) + ")");
        }
        if (!problems.isEmpty()) {
            throw new PageFileException(where + " is damaged: " + String.join("; ", problems)
                    + "; restore it from a backup (its records were moved into it)");
        }
    }

    /** Whether a page file's metadata column {@code name} has the Parquet type that reads as its own. */
    private static boolean ownType(String name, Type type) {
        if (!type.isPrimitive() || type.isRepetition(Type.Repetition.REPEATED)) {
            return false;
        }
        PrimitiveTypeName physical = type.asPrimitiveType().getPrimitiveTypeName();
        LogicalTypeAnnotation logical = type.getLogicalTypeAnnotation();
        if (name.equals(Constants.MetadataColumns.COMMIT_TIME)) {
            return physical == PrimitiveTypeName.INT64
                    && logical instanceof LogicalTypeAnnotation.TimestampLogicalTypeAnnotation time
                    && time.isAdjustedToUTC() && time.getUnit() == LogicalTypeAnnotation.TimeUnit.MICROS;
        }
        int bits = name.equals(Constants.MetadataColumns.ROW) ? 32 : 64;
        return physical == (bits == 32 ? PrimitiveTypeName.INT32 : PrimitiveTypeName.INT64)
                && (logical == null || logical instanceof LogicalTypeAnnotation.IntLogicalTypeAnnotation integer
                        && integer.isSigned() && integer.getBitWidth() == bits);
    }

    private static ByteBuffer readFully(FileChannel channel, long position, int length) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(length);
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, position + buffer.position()) < 0) {
                throw new IOException("it ends before its footer");
            }
        }
        return buffer.flip();
    }
}
