package io.sparkjournal.journal;

import io.sparkjournal.format.FormatVersionException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * A command for tests/test_jvm_journal_agreement.py (and for looking at a lane
 * by hand): prints what {@link LaneSnapshot} makes of a lane as one JSON
 * document. Not an API; the field names are Python's.
 *
 * <pre>LaneDump LANE [--recover] [--no-crc] [--hold]</pre>
 *
 * Output (numbers unsigned, ASCII only): {@code records} (live, in snapshot
 * order: id, user_type, body_len, file_id, offset, large, and the body's
 * size, crc32c and, up to 64 bytes, hex), {@code prepared} (tx_id, xid as hex,
 * record_ids, records as above), {@code open_transactions} (tx_id,
 * record_ids), {@code max_record_id}, {@code max_tx_id}, {@code generation},
 * {@code pending_swap} (null or generation, old, new), {@code files} (path,
 * file_id, end, records, torn_end) and {@code report} (LoadReport's fields).
 * Every body is read (so a large body's damage shows), live records first.
 * Exit 0; on any error {@code {"error": class, "message": ..., "path": ...,
 * "offset": ...}} (path and offset where the error names them) and exit 2;
 * bad arguments exit 1. {@code --hold} keeps the snapshot open, and with it
 * the lane's file-set lock, after printing, until stdin ends: what a long read
 * does to the lane's maintenance.
 */
public final class LaneDump {

    private static final int HEX_UP_TO = 64;

    private LaneDump() {
    }

    public static void main(String[] args) {
        String lane = null;
        boolean recover = false;
        boolean checksum = true;
        boolean hold = false;
        for (String arg : args) {
            if (arg.equals("--hold")) {
                hold = true;
            } else if (arg.equals("--recover")) {
                recover = true;
            } else if (arg.equals("--no-crc")) {
                checksum = false;
            } else if (lane == null && !arg.startsWith("--")) {
                lane = arg;
            } else {
                lane = null;
                break;
            }
        }
        if (lane == null) {
            System.err.println("usage: LaneDump LANE [--recover] [--no-crc] [--hold]");
            System.exit(1);
            return;
        }
        PrintStream stdout = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        try (LaneSnapshot snapshot = LaneSnapshot.read(Paths.get(lane), checksum, recover)) {
            Json out = new Json();
            dump(snapshot, out);
            stdout.println(out.text());
            stdout.flush();
            if (hold) {
                System.in.readAllBytes();
            }
        } catch (IOException | RuntimeException failed) {
            Json out = new Json();
            error(failed, out);
            stdout.println(out.text());
            stdout.flush();
            System.exit(2);
        }
        System.exit(0);
    }

    private static void dump(LaneSnapshot snapshot, Json out) throws IOException {
        out.open('{').key("records").open('[');
        for (LiveRecord record : snapshot.records()) {
            record(record, out);
        }
        out.close(']').key("prepared").open('[');
        for (PreparedTx tx : snapshot.prepared()) {
            out.open('{').key("tx_id").unsigned(tx.txId())
                    .key("xid").string(hex(ByteBuffer.wrap(tx.xid())))
                    .key("record_ids").ids(tx.recordIds()).key("records").open('[');
            for (LiveRecord record : tx.records()) {
                record(record, out);
            }
            out.close(']').close('}');
        }
        out.close(']').key("open_transactions").open('[');
        for (Map.Entry<Long, List<Long>> tx : snapshot.openTransactions().entrySet()) {
            out.open('{').key("tx_id").unsigned(tx.getKey()).key("record_ids").ids(tx.getValue())
                    .close('}');
        }
        out.close(']').key("max_record_id").unsigned(snapshot.maxRecordId())
                .key("max_tx_id").unsigned(snapshot.maxTxId())
                .key("generation").number(snapshot.generation()).key("pending_swap");
        ControlFile swap = snapshot.pendingSwap();
        if (swap == null) {
            out.raw("null");
        } else {
            out.open('{').key("generation").number(swap.generation());
            pairs("old", swap.old(), out);
            pairs("new", swap.added(), out);
            out.close('}');
        }
        out.key("files").open('[');
        for (LoadedFile file : snapshot.files()) {
            out.open('{').key("path").string(file.path().toString())
                    .key("file_id").unsigned(file.fileId()).key("end").number(file.end())
                    .key("records").number(file.dataRecords())
                    .key("torn_end").number(file.tornEnd())
                    .close('}');
        }
        out.close(']').key("report");
        report(snapshot.report(), out);
        out.close('}');
    }

    private static void record(LiveRecord record, Json out) throws IOException {
        ByteBuffer body = record.body();
        CRC32C crc = new CRC32C();
        crc.update(body.duplicate());
        out.open('{').key("id").unsigned(record.recordId())
                .key("user_type").number(record.userType())
                .key("body_len").number(record.bodyLength())
                .key("file_id").unsigned(record.fileId())
                .key("offset").number(record.offset())
                .key("large").raw(record.isLarge() ? "true" : "false")
                .key("size").number(body.remaining()).key("crc32c").number(crc.getValue());
        if (body.remaining() <= HEX_UP_TO) {
            out.key("hex").string(hex(body));
        }
        out.close('}');
    }

    private static void pairs(String name, List<Map.Entry<String, Long>> pairs, Json out) {
        out.key(name).open('[');
        for (Map.Entry<String, Long> pair : pairs) {
            out.open('[').string(pair.getKey()).unsigned(pair.getValue()).close(']');
        }
        out.close(']');
    }

    private static void report(LoadReport r, Json out) {
        out.open('{').key("files").number(r.files())
                .key("records_scanned").number(r.recordsScanned())
                .key("live_records").number(r.liveRecords())
                .key("bytes_scanned").number(r.bytesScanned())
                .key("crc_deferred").number(r.crcDeferred())
                .key("prepared_tx_ids").ids(r.preparedTxIds())
                .key("rolled_back_tx_ids").ids(r.rolledBackTxIds())
                .key("broken_tx_ids").ids(r.brokenTxIds()).key("torn_tail");
        LoadReport.TornTail torn = r.tornTail();
        if (torn == null) {
            out.raw("null");
        } else {
            out.open('{').key("file").string(torn.file()).key("offset").number(torn.offset())
                    .key("records_dropped").number(torn.recordsDropped())
                    .key("bytes_dropped").number(torn.bytesDropped()).close('}');
        }
        out.key("attic").strings(r.attic()).key("recoveries").open('[');
        for (LoadReport.Recovery recovery : r.recoveries()) {
            out.open('{').key("file").string(recovery.file())
                    .key("moved_to").string(recovery.movedTo())
                    .key("offset").number(recovery.offset()).key("detail").string(recovery.detail())
                    .key("lost_record_ids").ids(recovery.lostRecordIds())
                    .key("lost_tx_ids").ids(recovery.lostTxIds()).close('}');
        }
        out.close(']').key("orphan_bodies_removed").number(r.orphanBodiesRemoved())
                .key("warnings").strings(r.warnings()).close('}');
    }

    private static void error(Throwable failed, Json out) {
        out.open('{').key("error").string(failed.getClass().getSimpleName())
                .key("message").string(String.valueOf(failed.getMessage()));
        if (failed instanceof CorruptJournalException) {
            CorruptJournalException corrupt = (CorruptJournalException) failed;
            out.key("path").string(corrupt.path()).key("offset").number(corrupt.offset())
                    .key("detail").string(corrupt.detail());
        } else if (failed instanceof FormatVersionException) {
            out.key("path").string(((FormatVersionException) failed).path());
        } else if (failed instanceof PathOutsideException) {
            out.key("path").string(((PathOutsideException) failed).path());
        }
        out.close('}');
    }

    private static String hex(ByteBuffer bytes) {
        StringBuilder out = new StringBuilder();
        ByteBuffer b = bytes.duplicate();
        while (b.hasRemaining()) {
            out.append(String.format("%02x", b.get()));
        }
        return out.toString();
    }

    /** A minimal JSON writer: values separated by ", " where one follows another. */
    private static final class Json {
        private final StringBuilder text = new StringBuilder();
        private boolean needComma;

        Json open(char bracket) {
            comma();
            text.append(bracket);
            needComma = false;
            return this;
        }

        Json close(char bracket) {
            text.append(bracket);
            needComma = true;
            return this;
        }

        Json key(String name) {
            string(name);
            text.append(": ");
            needComma = false;
            return this;
        }

        Json raw(String value) {
            comma();
            text.append(value);
            needComma = true;
            return this;
        }

        Json number(long value) {
            return raw(Long.toString(value));
        }

        Json unsigned(long value) {
            return raw(Long.toUnsignedString(value));
        }

        Json ids(List<Long> ids) {
            open('[');
            ids.forEach(this::unsigned);
            return close(']');
        }

        Json strings(List<String> values) {
            open('[');
            values.forEach(this::string);
            return close(']');
        }

        Json string(String value) {
            comma();
            text.append('"');
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (c == '"' || c == '\\') {
                    text.append('\\').append(c);
                } else if (c >= 0x20 && c < 0x7f) {
                    text.append(c);
                } else {
                    text.append(String.format("\\u%04x", (int) c));
                }
            }
            text.append('"');
            needComma = true;
            return this;
        }

        private void comma() {
            if (needComma) {
                text.append(", ");
            }
        }

        String text() {
            return text.toString();
        }
    }
}
