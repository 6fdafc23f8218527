package io.sparkjournal.format;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.function.IntFunction;

/**
 * A command for tests/test_jvm_format_agreement.py only: prints what
 * {@link RecordScan} and {@link FileHeader} make of files, as JSON, so that
 * Python can compare it with its own codecs. Not an API.
 *
 * <pre>
 * ScanDump FILE START FILE_ID32 VERIFY_CRC [FILE START FILE_ID32 VERIFY_CRC ...]
 * ScanDump --header FILE [FILE ...]
 * </pre>
 *
 * Each FILE gives one line of output, in argument order: one JSON object. A
 * scan memory-maps the file whole (read only) and prints every ScanResult
 * field under the names of sparkjournal/format/scan_result.py (n, n_clean,
 * clean_end, first_foreign, foreign_reason, scan_end, and the lists types,
 * flags, user_types, body_lens, counts, record_ids, tx_ids, offsets, their
 * numbers unsigned). A header prints the fields of
 * sparkjournal/journal/datafile.py's FileHeader under its names. A file that
 * cannot be read, or a header that is refused, prints
 * {"error": "ExceptionClass: message"} instead. The output is ASCII (any
 * other character is written as a JSON unicode escape). Exit status: 0, 1 if
 * any line is an error, 2 for bad arguments.
 */
public final class ScanDump {

    private static final String USAGE =
            "usage: ScanDump FILE START FILE_ID32 VERIFY_CRC(0|1) ...\n"
            + "       ScanDump --header FILE ...";

    private ScanDump() {
    }

    public static void main(String[] args) {
        StringBuilder out = new StringBuilder();
        int errors;
        try {
            boolean header = args.length > 0 && args[0].equals("--header");
            errors = header ? headers(args, out) : scans(args, out);
        } catch (IllegalArgumentException bad) {
            System.err.println(bad.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        PrintStream stdout = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
        stdout.print(out);
        stdout.flush();
        System.exit(errors == 0 ? 0 : 1);
    }

    private static int scans(String[] args, StringBuilder out) {
        if (args.length == 0 || args.length % 4 != 0) {
            throw new IllegalArgumentException(
                    "expected groups of FILE START FILE_ID32 VERIFY_CRC");
        }
        int errors = 0;
        for (int i = 0; i < args.length; i += 4) {
            long start = number(args[i + 1], "START");
            long fileId32 = number(args[i + 2], "FILE_ID32");
            if (!args[i + 3].equals("0") && !args[i + 3].equals("1")) {
                throw new IllegalArgumentException("VERIFY_CRC must be 0 or 1, not " + args[i + 3]);
            }
            try {
                MappedByteBuffer map = map(Paths.get(args[i]));
                scanJson(RecordScan.scan(map, start, fileId32, args[i + 3].equals("1")), out);
            } catch (IOException | RuntimeException failed) {
                errorJson(failed, out);
                errors++;
            }
            out.append('\n');
        }
        return errors;
    }

    private static int headers(String[] args, StringBuilder out) {
        if (args.length < 2) {
            throw new IllegalArgumentException("--header needs at least one FILE");
        }
        int errors = 0;
        for (int i = 1; i < args.length; i++) {
            try {
                headerJson(FileHeader.read(Paths.get(args[i])), out);
            } catch (IOException | RuntimeException failed) {
                errorJson(failed, out);
                errors++;
            }
            out.append('\n');
        }
        return errors;
    }

    /** The whole file, mapped read only; files of 2 GiB and more are refused. */
    private static MappedByteBuffer map(Path path) throws IOException {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size > Integer.MAX_VALUE) {
                throw new IOException(path + " is " + size
                        + " bytes: ScanDump maps at most 2 GiB - 1");
            }
            return channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
        }
    }

    private static long number(String text, String what) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException bad) {
            throw new IllegalArgumentException(what + " must be a whole number, not " + text);
        }
    }

    private static void scanJson(ScanResult r, StringBuilder out) {
        out.append("{\"n\": ").append(r.n())
                .append(", \"n_clean\": ").append(r.nClean())
                .append(", \"clean_end\": ").append(r.cleanEnd())
                .append(", \"first_foreign\": ").append(r.firstForeign())
                .append(", \"foreign_reason\": ");
        string(r.foreignReason(), out);
        out.append(", \"scan_end\": ").append(r.scanEnd());
        int n = r.n();
        list("types", n, i -> Integer.toString(r.type(i)), out);
        list("flags", n, i -> Integer.toString(r.flags(i)), out);
        list("user_types", n, i -> Integer.toString(r.userType(i)), out);
        list("body_lens", n, i -> Integer.toString(r.bodyLength(i)), out);
        list("counts", n, i -> Long.toString(r.count(i)), out);
        list("record_ids", n, i -> Long.toUnsignedString(r.recordId(i)), out);
        list("tx_ids", n, i -> Long.toUnsignedString(r.txId(i)), out);
        list("offsets", n, i -> Long.toString(r.offset(i)), out);
        out.append('}');
    }

    /** {@code , "name": [v0, v1, ...]} for the n values {@code value} gives. */
    private static void list(String name, int n, IntFunction<String> value, StringBuilder out) {
        out.append(", \"").append(name).append("\": [");
        for (int i = 0; i < n; i++) {
            out.append(i == 0 ? "" : ", ").append(value.apply(i));
        }
        out.append(']');
    }

    private static void headerJson(FileHeader h, StringBuilder out) {
        out.append("{\"format_version\": ").append(h.formatVersion())
                .append(", \"user_version\": ").append(h.userVersion())
                .append(", \"file_id\": ").append(Long.toUnsignedString(h.fileId()))
                .append(", \"file_size\": ").append(Long.toUnsignedString(h.fileSize()))
                .append(", \"block_size\": ").append(h.blockSize())
                .append(", \"sealed_end\": ").append(h.sealedEnd())
                .append(", \"sync_window\": ").append(Long.toUnsignedString(h.syncWindow()))
                .append(", \"created_ns\": ").append(Long.toUnsignedString(h.createdNs()))
                .append(", \"prev_file_id\": ").append(Long.toUnsignedString(h.prevFileId()))
                .append(", \"prev_end\": ").append(Long.toUnsignedString(h.prevEnd()))
                .append(", \"max_record_id\": ").append(Long.toUnsignedString(h.maxRecordId()))
                .append(", \"max_tx_id\": ").append(Long.toUnsignedString(h.maxTxId()))
                .append('}');
    }

    private static void errorJson(Exception failed, StringBuilder out) {
        out.append("{\"error\": ");
        string(failed.getClass().getSimpleName() + ": " + failed.getMessage(), out);
        out.append('}');
    }

    /** A JSON string literal of {@code text}, ASCII only. */
    private static void string(String text, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c >= 0x20 && c < 0x7f) {
                out.append(c);
            } else {
                out.append(String.format("\\u%04x", (int) c));
            }
        }
        out.append('"');
    }
}
