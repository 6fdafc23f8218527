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
 * (EVENTS.md, "Lane requests"), else {@link RequestException}. The folder or a file leading outside the
 * lane is {@link PathOutsideException}; a folder or file that cannot be read
 * otherwise is the IOException itself.
 */
public final class LaneRequests {

    public static final String REQUESTS = "requests";
    public static final int FORMAT = 1;

    /** One pending request: its file (under the folder's real path) and its JSON object. */
    public record Request(Path path, ObjectNode body) {

        /** Its "kind" ("delete", "page", "drop-page"; a string, as read). */
        public String kind() {
            return body.get("kind").textValue();
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
                StrictJson.string(request, "kind");
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
