package io.sparkjournal.events;

import io.sparkjournal.format.Layout;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.math.MathContext;
import java.nio.channels.Channels;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.ipc.WriteChannel;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The body of one EVENTS record (EVENTS.md, "EVENTS records"): an Arrow IPC
 * stream (no compression) of the schema - the root schema's fields and its own
 * metadata plus {@code sparkjournal.query}, {@code sparkjournal.batch} (the id
 * in decimal) and {@code sparkjournal.stats} ({@link EventsStats}) - then one
 * record batch of the piece's rows, then the end-of-stream marker. The spec
 * fixes the messages and their metadata, not the bytes: Arrow Java writes
 * validity buffers another writer may leave out, and every reader of the spec
 * (here {@link EventsBody#split}) reads the same batch, tag and stats.
 *
 * <p>{@link #rowsPerPiece} is the cut EVENTS.md, "Pieces" describes
 * (informative): a batch is cut into row slices of that many rows (the last
 * one shorter). Nothing here writes an empty piece's body unless asked: no
 * piece is empty (a writer requirement of "Pieces"), so an empty batch has no
 * piece and a caller should not ask for one.
 */
public final class EventsBodyWriter {

    /**
     * The 4096 of the piece budget (EVENTS.md, "Pieces"): schema message,
     * framing and padding per record, generously.
     */
    public static final int IPC_OVERHEAD = 4096;

    private EventsBodyWriter() {
    }

    /** The body of all rows of {@code root}, tagged with (query, batchId). */
    public static byte[] body(VectorSchemaRoot root, String query, long batchId) {
        return body(root, 0, root.getRowCount(), query, batchId);
    }

    /** The body of rows [start, start + length) of {@code root}, tagged with (query, batchId). */
    public static byte[] body(VectorSchemaRoot root, int start, int length, String query,
                              long batchId) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            write(root, start, length, query, batchId, Channels.newChannel(out));
        } catch (IOException impossible) {
            throw new UncheckedIOException(impossible);
        }
        return out.toByteArray();
    }

    /**
     * Writes the body of rows [start, start + length) of {@code root} to
     * {@code out}; returns its length in bytes. {@code root} is only read: a
     * row range is written from a slice of it, released before returning.
     */
    public static long write(VectorSchemaRoot root, int start, int length, String query,
                             long batchId, WritableByteChannel out) throws IOException {
        byte[] stats = EventsStats.json(root, start, length);
        Schema schema = new Schema(root.getSchema().getFields(),
                tag(root.getSchema().getCustomMetadata(), query, batchId, stats));
        boolean whole = start == 0 && length == root.getRowCount();
        VectorSchemaRoot piece = whole ? root : root.slice(start, length);
        try (ArrowRecordBatch batch = new VectorUnloader(piece).getRecordBatch()) {
            WriteChannel channel = new WriteChannel(out);
            MessageSerializer.serialize(channel, schema, IpcOption.DEFAULT);
            MessageSerializer.serialize(channel, batch, IpcOption.DEFAULT);
            ArrowStreamWriter.writeEndOfStream(channel, IpcOption.DEFAULT);
            return channel.getCurrentPosition();
        } finally {
            if (!whole) {
                piece.close();
            }
        }
    }

    /** The schema metadata of a stored piece: the batch's own, then the three tag keys. */
    static Map<String, String> tag(Map<String, String> own, String query, long batchId,
                                   byte[] stats) {
        Map<String, String> metadata = new LinkedHashMap<>();
        if (own != null) {
            metadata.putAll(own);
        }
        metadata.put(EventsBody.META_QUERY, query);
        metadata.put(EventsBody.META_BATCH, Long.toString(batchId));
        metadata.put(EventsBody.META_STATS, new String(stats, StandardCharsets.US_ASCII));
        return metadata;
    }

    /**
     * Rows per piece so that a body should fit {@code maxBody} bytes (EVENTS.md,
     * "Pieces", informative): with budget = max(1, maxBody - RECORD_HEADER_SIZE
     * - IPC_OVERHEAD) and S the Arrow size of the batch
     * ({@link ArrowBytes#of(VectorSchemaRoot)}), all rows if S fits the budget,
     * else max(1, floor(rows * budget / S)); 0 for an empty batch (no piece). A
     * piece estimated this way may still exceed maxBody: the rule is an
     * estimate from the column sizes, and a row wider than the budget makes a
     * piece of one row.
     */
    public static int rowsPerPiece(VectorSchemaRoot root, long maxBody) {
        return rowsPerPiece(root.getRowCount(), ArrowBytes.of(root), maxBody);
    }

    /** {@link #rowsPerPiece(VectorSchemaRoot, long)} from the batch's row count and Arrow size. */
    public static int rowsPerPiece(int rows, long size, long maxBody) {
        long budget = Math.max(1, maxBody - Layout.RECORD_HEADER_SIZE - IPC_OVERHEAD);
        if (rows == 0) {
            return 0;
        }
        if (size <= budget) {
            return rows;
        }
        // floor(rows * budget / size): the exact product, divided with one rounding to a
        // double, then truncated (what today's writers compute; it differs from the exact
        // floor only where the quotient lies within a double's rounding of an integer)
        double quotient = new BigDecimal(BigDecimal.valueOf(rows).multiply(BigDecimal.valueOf(budget))
                .toBigInteger()).divide(BigDecimal.valueOf(size), MathContext.DECIMAL128)
                .doubleValue();
        return (int) Math.max(1, Math.min(rows, (long) quotient));
    }
}
