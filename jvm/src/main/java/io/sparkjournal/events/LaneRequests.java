package io.sparkjournal.events;

import io.sparkjournal.journal.InsideLane;
import io.sparkjournal.journal.PathOutsideException;
import io.sparkjournal.journal.CodePoints;
import io.sparkjournal.journal.StrictJson;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sparkjournal.format.FormatVersionException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import io.sparkjournal.format.Constants;

/**
 * The requests maintenance left for a lane's writer (EVENTS.md):
 * {@code <lane>/requests/<ns, 20 digits>-<random>.json}, each a JSON object
 * {"format": 1, "kind": ..., ...} written atomically and removed once carried
 * out. A reader reads them (before the lane's records) because a pending
 * delete is already visible ({@link DeleteRequests}). Nothing in them is
 * evaluated; the files are only read, never removed here.
 *
 * <p>{@link #pending} lists names ending in ".json" in code point order; a
 * file gone since the listing is skipped; a missing folder means none. Each
 * is read strictly (JSON.md): "format" first (an integer above 1 is
 * {@link FormatVersionException}), then it must be 1 and "kind" a string
 * (EVENTS.md, "Lane requests"), else {@link RequestException}. The fields of
 * the kinds the spec defines are checked here too, although this reader only
 * applies "delete" requests (EVENTS.md: a delete, page or drop-page request
 * whose fields are not as stated is damaged for every reader): "page" must
 * hold an object "page" of name, size, crc32c, rows, record_ids,
 * batch_range and time_range ({@link #checkPage}), "drop-page" a page file
 * name; a delete's fields are checked by {@link DeleteRequests#records}. A
 * kind the spec does not define is returned unchecked (it stays pending).
 * The folder or a file leading outside the lane is
 * {@link PathOutsideException}; a folder or file that cannot be read
 * otherwise is the IOException itself.
 */
public final class LaneRequests {

    public static final String REQUESTS = io.sparkjournal.format.Constants.Paths.REQUESTS;
    public static final int FORMAT = 1;

    /** One pending request: its file (under the folder's real path) and its JSON object. */
    public record Request(Path path, ObjectNode body) {

        /** Its "kind" ("delete", "page", "drop-page"; a string, as read). */
        public String kind() {
            return body.get(Constants.LaneRequest.KIND).textValue();
        }
    }

    private LaneRequests() {
    }

    /** Every request of {@code lane} not carried out yet, oldest first. */
    public static List<Request> pending(Path lane) throws IOException {
        String root = lane.toString();
        String folder = InsideLane.check(root, REQUESTS, "the lane requests folder");
        List<String> names = names(folder);
        names.sort(CodePoints::compare);
        List<Request> found = new ArrayList<>();
        for (String name : names) {
            String path = folder + "/" + name;
            InsideLane.check(root, REQUESTS + "/" + name, "lane request");
            byte[] raw;
            try {
                raw = Files.readAllBytes(Paths.get(path));
            } catch (NoSuchFileException carriedOut) {
                continue;
            }
            JsonNode request;
            try {
                request = StrictJson.parse(raw);
                StrictJson.format(request, FORMAT, "lane request", path);
                String kind = StrictJson.string(request, Constants.LaneRequest.KIND);
                if (kind.equals(Constants.RequestKinds.PAGE)) {
                    checkPage(StrictJson.object(request, Constants.PageRequest.PAGE));
                } else if (kind.equals(Constants.RequestKinds.DROP_PAGE)) {
                    pageName(StrictJson.required(request, Constants.PageRequest.PAGE), "\"" + Constants.PageRequest.PAGE + "\"");
                } else if (kind.equals(Constants.RequestKinds.DELETE)) {
                    DeleteRequests.records((ObjectNode) request, path);
                }
            } catch (StrictJson.Refused damaged) {
                throw new RequestException("lane request " + path + " is damaged ("
                        + damaged.getMessage() + "); it was written atomically, so it cannot be"
                        + " carried out: remove it and run the maintenance job that wrote it again",
                        damaged);
            }
            found.add(new Request(Paths.get(path), (ObjectNode) request));
        }
        return found;
    }


    /**
     * Refuses a "page" request's "page" object unless it holds what EVENTS.md
     * states: "name" a page file name, "size" and "rows" u64, "crc32c" u32,
     * "record_ids" a non-empty list of u64 strictly ascending, "batch_range"
     * and "time_range" lists of two i64.
     */
    static void checkPage(JsonNode page) {
        pageName(StrictJson.required(page, Constants.RequestedPage.NAME), pageField(Constants.RequestedPage.NAME));
        StrictJson.u64(page, Constants.RequestedPage.SIZE);
        StrictJson.u64(page, Constants.RequestedPage.ROWS);
        StrictJson.integer(StrictJson.required(page, Constants.RequestedPage.CRC32C), pageField(Constants.RequestedPage.CRC32C), 0, 0xffffffffL);
        JsonNode ids = StrictJson.array(page, Constants.RequestedPage.RECORD_IDS);
        if (ids.isEmpty()) {
            throw new StrictJson.Refused(pageField(Constants.RequestedPage.RECORD_IDS) + " is empty");
        }
        long previous = 0;
        for (int i = 0; i < ids.size(); i++) {
            long id = StrictJson.u64Value(ids.get(i), "a record id of \"" + Constants.PageRequest.PAGE + "\"");
            if (i > 0 && Long.compareUnsigned(previous, id) >= 0) {
                throw new StrictJson.Refused(pageField(Constants.RequestedPage.RECORD_IDS) + " are not strictly ascending ("
                        + Long.toUnsignedString(previous) + " then " + Long.toUnsignedString(id) + ")");
            }
            previous = id;
        }
        for (String range : new String[] {Constants.RequestedPage.BATCH_RANGE, Constants.RequestedPage.TIME_RANGE}) {
            JsonNode pair = StrictJson.array(page, range);
            if (pair.size() != 2) {
                throw new StrictJson.Refused(pageField(range) + " holds " + pair.size()
                        + " values, not 2");
            }
            for (JsonNode bound : pair) {
                StrictJson.integer(bound, pageField(range), Long.MIN_VALUE, Long.MAX_VALUE);
            }
        }
    }

    /** {@code "page"."<name>"}: a field of a page request's page object, as messages name it. */
    private static String pageField(String name) {
        return "\"" + Constants.PageRequest.PAGE + "\".\"" + name + "\"";
    }

    /** {@code value} as a page file name ({@code page-[0-9a-z-]+.parquet}); refused otherwise. */
    private static String pageName(JsonNode value, String what) {
        String name = StrictJson.stringValue(value, what);
        if (!PageRef.NAME.matcher(name).matches()) {
            throw new StrictJson.Refused(what + " is " + io.sparkjournal.journal.Shown.text(name)
                    + ", not a page file name (page-[0-9a-z-]+.parquet)");
        }
        return name;
    }

    /** Whether {@code lane} has a request not carried out yet (a writer that carries out
     *  none gives such a lane up to maintenance: LaneWriters); reads no request. */
    public static boolean waiting(Path lane) throws IOException {
        return !names(InsideLane.check(lane.toString(), REQUESTS, "the lane requests folder"))
                .isEmpty();
    }

    /** The request file names in {@code folder} (one .json each). */
    private static List<String> names(String folder) throws IOException {
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(Paths.get(folder))) {
            for (Path entry : entries) {
                String name = entry.getFileName().toString();
                if (name.endsWith(".json")) {
                    names.add(name);
                }
            }
        } catch (NoSuchFileException absent) {
            return new ArrayList<>();
        }
        return names;
    }
}
