package io.sparkjournal.journal;

import static io.sparkjournal.Expect.isTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.GoldenCorpus;
import io.sparkjournal.TempFolder;
import io.sparkjournal.events.PageRef;
import io.sparkjournal.format.FormatVersionException;
import io.sparkjournal.format.Layout;
import io.sparkjournal.format.RecordScan;
import io.sparkjournal.format.ScanResult;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * The Java read path gives the golden lane corpus's readings
 * (tests/golden/lanes/, FORMAT.md; expected.json's fields are described in its
 * generate.py): for every case, {@link LaneSnapshot#read} of a copy of the
 * lane lists the live records with their bodies, the prepared and open
 * transactions, the load's report (torn tail, broken transactions, files left
 * aside), the watermarks and the pending swap as stated, or fails with the
 * error class the case's kind names ({@link CorruptJournalException},
 * {@link FormatVersionException}) naming the file and, where stated, the
 * offset; every data file scans ({@link RecordScan}, CRCs checked) as stated;
 * each live PAGE record decodes ({@link PageRef}) to the stated page, whose
 * file has the stated size. The corpus folder is the system property
 * {@value #GOLDEN} (tests/test_jvm_unit.py passes it). The checked-in files
 * are never opened for writing: each case is copied first.
 */
public final class LaneGoldenTest {

    static final String GOLDEN = "sparkjournal.golden.lanes";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int HEX_UP_TO = 64;
    private static final List<String> READING = List.of("records", "prepared", "open_transactions", "report",
            "max_record_id", "max_tx_id", "pending_swap");

    private LaneGoldenTest() {
    }

    public static void testEveryGoldenLaneReadsAsStated() throws Exception {
        List<String> wrong = new ArrayList<>();
        int read = 0;
        for (String name : cases()) {
            JsonNode expected = expected(name);
            if ("load".equals(expected.path("error").path("at").asText())) {
                continue;
            }
            read++;
            try (TempFolder folder = new TempFolder()) {
                Path lane = copied(name, folder.path());
                List<String> failed = new ArrayList<>();
                JsonNode found;
                try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                    found = reading(snapshot, lane, expected.has("pages"), failed);
                }
                for (String key : READING) {
                    differences(name + ": " + key, expected.get(key), found.get(key), wrong);
                }
                if (expected.has("pages")) {
                    differences(name + ": pages", pageFacts(expected.get("pages")), found.get("pages"), wrong);
                }
                JsonNode files = expected.path("error").path("files");
                List<String> stated = new ArrayList<>();
                files.forEach(file -> stated.add(file.asText()));
                failed.sort(null);
                if (!stated.equals(failed)) {
                    wrong.add(name + ": reading bodies failed naming " + failed + ", expected " + stated);
                }
            }
        }
        isTrue(read > 0, "no golden lane reads");
        isTrue(wrong.isEmpty(), "readings differ from expected.json:\n" + String.join("\n", wrong));
    }

    public static void testEveryRefusedGoldenLaneThrowsItsErrorNamingTheFile() throws Exception {
        List<String> wrong = new ArrayList<>();
        int refused = 0;
        for (String name : cases()) {
            JsonNode error = expected(name).path("error");
            if (!"load".equals(error.path("at").asText())) {
                continue;
            }
            refused++;
            try (TempFolder folder = new TempFolder()) {
                Path lane = copied(name, folder.path());
                String file = error.get("file").isNull() ? null          // null: the spec names no file
                        : lane.resolve(error.get("file").asText()).toString();
                try (LaneSnapshot snapshot = LaneSnapshot.read(lane)) {
                    wrong.add(name + ": read, expected " + error);
                } catch (CorruptJournalException corrupt) {
                    if (!"damaged".equals(error.get("kind").asText())
                            || (file != null && !file.equals(corrupt.path()))
                            || (!error.get("offset").isNull() && error.get("offset").asLong() != corrupt.offset())) {
                        wrong.add(name + ": " + corrupt + " at " + corrupt.path() + ":" + corrupt.offset()
                                + ", expected " + error);
                    }
                } catch (FormatVersionException newer) {
                    if (!"newer-format".equals(error.get("kind").asText())
                            || (file != null && !file.equals(newer.path()))) {
                        wrong.add(name + ": " + newer + " naming " + newer.path() + ", expected " + error);
                    }
                } catch (IOException | RuntimeException other) {
                    wrong.add(name + ": " + other + ", expected " + error);
                }
            }
        }
        isTrue(refused > 0, "no golden lane is refused");
        isTrue(wrong.isEmpty(), String.join("\n", wrong));
    }

    /**
     * The case stating {@code recovery} (recovered): read in recovery mode, the
     * damaged sealed file is left out (a reader leaves it in place) and the
     * records and transactions lost with it are reported; the rest reads as
     * stated.
     */
    public static void testADamagedSealedFileReadInRecoveryIsLeftOutAndWhatItHeldReported() throws Exception {
        List<String> wrong = new ArrayList<>();
        int read = 0;
        for (String name : cases()) {
            JsonNode expected = expected(name).get("recovery");
            if (expected == null) {
                continue;
            }
            read++;
            try (TempFolder folder = new TempFolder()) {
                Path lane = copied(name, folder.path());
                List<String> before;
                try (Stream<Path> listed = Files.list(lane)) {
                    before = listed.map(path -> path.getFileName().toString()).sorted().toList();
                }
                JsonNode found;
                ArrayNode recoveries = JSON.createArrayNode();
                try (LaneSnapshot snapshot = LaneSnapshot.read(lane, true, true)) {
                    found = reading(snapshot, lane, false, new ArrayList<>());
                    for (LoadReport.Recovery recovery : snapshot.report().recoveries()) {
                        ObjectNode entry = recoveries.addObject()
                                .put("file", lane.relativize(lane.resolve(recovery.file())).toString())
                                .put("offset", recovery.offset());
                        recovery.lostRecordIds().forEach(entry.putArray("lost_record_ids")::add);
                        recovery.lostTxIds().forEach(entry.putArray("lost_tx_ids")::add);
                    }
                }
                for (String key : List.of("records", "prepared", "open_transactions", "max_record_id", "max_tx_id")) {
                    differences(name + " (recovery): " + key, expected.get(key), found.get(key), wrong);
                }
                differences(name + " (recovery): recoveries", expected.get("recoveries"), normal(recoveries), wrong);
                List<String> after;
                try (Stream<Path> listed = Files.list(lane)) {
                    after = listed.map(path -> path.getFileName().toString())
                            .filter(n -> !n.equals("files.lock")).sorted().toList();
                }
                if (!after.equals(before.stream().filter(n -> !n.equals("files.lock")).toList())) {
                    wrong.add(name + " (recovery): a reader changed the lane: " + before + " -> " + after);
                }
            }
        }
        isTrue(read > 0, "no golden lane states a recovery");
        isTrue(wrong.isEmpty(), "recovery readings differ from expected.json:\n" + String.join("\n", wrong));
    }

    public static void testEveryDataFileOfTheGoldenLanesScansAsStated() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (String name : cases()) {
            Path lane = golden().resolve(name).resolve("lane");
            for (JsonNode stated : expected(name).get("scans")) {
                ByteBuffer raw;
                try (FileChannel channel = FileChannel.open(lane.resolve(stated.get("file").asText()),
                        StandardOpenOption.READ)) {
                    raw = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
                }
                long fileId = stated.get("file_id").asLong();
                ScanResult s = RecordScan.scan(raw, Layout.FILE_HEADER_SIZE, fileId & 0xFFFFFFFFL, true);
                ObjectNode found = JSON.createObjectNode().put("file", stated.get("file").asText())
                        .put("file_id", fileId).put("n", s.n()).put("n_clean", s.nClean())
                        .put("clean_end", s.cleanEnd()).put("first_foreign", s.firstForeign())
                        .put("foreign_reason", s.foreignReason());
                ArrayNode records = found.putArray("records");
                for (int i = 0; i < s.n(); i++) {
                    records.addArray().add(s.type(i)).add(s.flags(i)).add(s.userType(i)).add(s.recordId(i))
                            .add(s.txId(i)).add(s.offset(i)).add(s.bodyLength(i)).add(s.count(i));
                }
                differences(name + ": scan of " + stated.get("file").asText(), stated, normal(found), wrong);
            }
        }
        isTrue(wrong.isEmpty(), "scans differ from expected.json:\n" + String.join("\n", wrong));
    }

    /** The snapshot's reading in expected.json's form; the files named by failed body reads go to {@code failed}. */
    private static JsonNode reading(LaneSnapshot snapshot, Path lane, boolean pages, List<String> failed)
            throws IOException {
        ObjectNode found = JSON.createObjectNode();
        ArrayNode records = found.putArray("records");
        ArrayNode pageList = JSON.createArrayNode();
        for (LiveRecord record : snapshot.records()) {
            ObjectNode entry = records.addObject().put("id", record.recordId()).put("user_type", record.userType())
                    .put("large", record.isLarge());
            ByteBuffer body;
            try {
                body = record.body();
            } catch (CorruptJournalException damaged) {
                entry.put("error", "damaged");
                failed.add(lane.relativize(Paths.get(damaged.path())).toString());
                continue;
            }
            byte[] raw = new byte[body.remaining()];
            body.duplicate().get(raw);
            entry.put("size", raw.length);
            if (raw.length <= HEX_UP_TO) {
                entry.put("hex", hex(raw));
            } else {
                entry.put("sha256", hex(sha256(raw)));
            }
            if (pages && record.userType() == 3) {
                PageRef ref = PageRef.decode(ByteBuffer.wrap(raw));
                isTrue(Files.size(ref.path(lane)) == ref.size(), "page file size of " + ref.name());
                ObjectNode page = JSON.createObjectNode().put("record_id", record.recordId())
                        .put("name", ref.name()).put("size", ref.size()).put("crc32c", ref.crc32c())
                        .put("rows", ref.rows());
                ArrayNode ids = page.putArray("record_ids");
                for (long id : ref.recordIds()) {
                    ids.add(id);
                }
                pageList.add(page);
            }
        }
        found.set("pages", pageList);
        ArrayNode prepared = found.putArray("prepared");
        for (PreparedTx tx : snapshot.prepared()) {
            ObjectNode entry = prepared.addObject().put("tx_id", tx.txId()).put("xid", hex(tx.xid()));
            tx.recordIds().forEach(entry.putArray("record_ids")::add);
        }
        ArrayNode open = found.putArray("open_transactions");
        for (Map.Entry<Long, List<Long>> tx : snapshot.openTransactions().entrySet()) {
            ObjectNode entry = open.addObject().put("tx_id", tx.getKey());
            tx.getValue().forEach(entry.putArray("record_ids")::add);
        }
        LoadReport report = snapshot.report();
        ObjectNode r = found.putObject("report");
        LoadReport.TornTail torn = report.tornTail();
        if (torn == null) {
            r.putNull("torn_tail");
        } else {
            r.putObject("torn_tail").put("file", lane.relativize(Paths.get(torn.file())).toString())
                    .put("offset", torn.offset()).put("records_dropped", torn.recordsDropped())
                    .put("bytes_dropped", torn.bytesDropped());
        }
        report.brokenTxIds().forEach(r.putArray("broken_tx_ids")::add);
        report.preparedTxIds().forEach(r.putArray("prepared_tx_ids")::add);
        TreeSet<String> skipped = new TreeSet<>();
        for (String warning : report.warnings()) {
            skipped.add(Paths.get(warning.substring(0, warning.indexOf(": "))).getFileName().toString());
        }
        skipped.forEach(r.putArray("skipped")::add);
        found.put("max_record_id", snapshot.maxRecordId()).put("max_tx_id", snapshot.maxTxId());
        ControlFile swap = snapshot.pendingSwap();
        if (swap == null) {
            found.putNull("pending_swap");
        } else {
            ObjectNode pending = found.putObject("pending_swap").put("generation", swap.generation());
            pairs(swap.old(), pending.putArray("old"));
            pairs(swap.added(), pending.putArray("new"));
        }
        return normal(found);
    }

    private static void pairs(List<Map.Entry<String, Long>> pairs, ArrayNode into) {
        for (Map.Entry<String, Long> pair : pairs) {
            into.addArray().add(pair.getKey()).add(pair.getValue());
        }
    }

    /** The stated pages without their rows (the JVM's Parquet reading of them is not asked here). */
    private static JsonNode pageFacts(JsonNode pages) {
        ArrayNode facts = JSON.createArrayNode();
        for (JsonNode page : pages) {
            ObjectNode fact = facts.addObject();
            for (String key : List.of("record_id", "name", "size", "crc32c", "rows", "record_ids")) {
                fact.set(key, page.get(key));
            }
        }
        return facts;
    }

    /** {@code node} written and parsed again: numbers take the node types a parse gives, as expected.json's. */
    private static JsonNode normal(JsonNode node) throws IOException {
        return JSON.readTree(JSON.writeValueAsBytes(node));
    }

    /** Adds to {@code wrong} one line per list item (or the whole value) of {@code found} that differs. */
    private static void differences(String where, JsonNode expected, JsonNode found, List<String> wrong) {
        if (expected != null && expected.isArray() && found != null && found.isArray()
                && expected.size() == found.size()) {
            for (int i = 0; i < expected.size(); i++) {
                if (!expected.get(i).equals(found.get(i))) {
                    wrong.add(where + "[" + i + "]: expected " + expected.get(i) + ", found " + found.get(i));
                }
            }
        } else if (expected == null || !expected.equals(found)) {
            wrong.add(where + ": expected " + expected + ", found " + found);
        }
    }

    private static byte[] sha256(byte[] raw) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(raw);
        } catch (NoSuchAlgorithmException absent) {
            throw new IllegalStateException(absent);
        }
    }

    private static String hex(byte[] raw) {
        StringBuilder out = new StringBuilder();
        for (byte b : raw) {
            out.append(String.format("%02x", b));
        }
        return out.toString();
    }

    /** The corpus folder, from the system property. */
    static Path golden() {
        return GoldenCorpus.folder(GOLDEN, "tests/golden/lanes");
    }

    /** The case folders of the corpus (those holding a lane), by name. */
    private static List<String> cases() throws IOException {
        return GoldenCorpus.cases(golden(), path -> Files.isDirectory(path.resolve("lane")));
    }

    private static JsonNode expected(String name) throws IOException {
        return JSON.readTree(Files.readAllBytes(golden().resolve(name).resolve("expected.json")));
    }

    /** The case's lane copied into {@code into}: the folder a reader opens. */
    private static Path copied(String name, Path into) throws IOException {
        return TempFolder.copyTree(golden().resolve(name).resolve("lane"), into.resolve("lane"));
    }
}
