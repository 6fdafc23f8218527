package io.sparkjournal.journal;

import com.fasterxml.jackson.databind.JsonNode;
import io.sparkjournal.format.Constants;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * A lane's compaction control file {@code compact.ctl} (FORMAT.md,
 * "Compaction"): a compaction whose swap is committed but maybe not finished.
 * JSON {@code {"format": 1, "generation": N, "old": [[name, id], ...],
 * "new": [[name, id], ...], "crc32c": C}}, C the CRC-32C of the canonical form
 * (JSON.md, "Writer requirements") of the other four fields.
 *
 * <p>Decoding reads the file strictly (JSON.md): "format" first (an integer
 * above {@link #FORMAT} is FormatVersionException before anything else is
 * looked at); then "generation" (u64 within a long), "old" and "new" (lists of
 * [string, u64] pairs) and "crc32c" (0 .. 2^32 - 1) with their types; then the
 * CRC over the canonical form of those values (never over the file's bytes,
 * so whitespace and name order do not matter; unknown names are ignored and
 * not covered); then every old name is a data file name without a separator
 * and every new name is an old one. Any failure but the newer format throws
 * CorruptJournalException naming the control file at offset 0: the file is
 * written atomically, so it can only be damaged, and then neither file set can
 * be trusted alone.
 */
public final class ControlFile {

    /** The control file's name in the lane. */
    public static final String NAME = "compact.ctl";
    /** The newest control file format this code reads. */
    public static final int FORMAT = 1;

    private final long generation;
    private final List<Map.Entry<String, Long>> old;
    private final List<Map.Entry<String, Long>> added;

    private ControlFile(long generation, List<Map.Entry<String, Long>> old,
                        List<Map.Entry<String, Long>> added) {
        this.generation = generation;
        this.old = Collections.unmodifiableList(old);
        this.added = Collections.unmodifiableList(added);
    }

    /** The lane's control file, or null when there is none. */
    public static ControlFile read(Path lane) throws IOException {
        Path path = lane.resolve(NAME);
        byte[] raw;
        try {
            raw = Files.readAllBytes(path);
        } catch (NoSuchFileException absent) {
            return null;
        }
        return decode(raw, path.toString());
    }

    /** Decodes the bytes of a control file; {@code path} names it in errors. */
    public static ControlFile decode(byte[] raw, String path) throws IOException {
        try {
            JsonNode data = StrictJson.parse(raw);
            StrictJson.format(data, FORMAT, "compaction control file", path);
            long generation = StrictJson.whole(data, Constants.ControlFile.GENERATION);
            List<Map.Entry<String, Long>> old = pairs(data, Constants.ControlFile.OLD);
            List<Map.Entry<String, Long>> added = pairs(data, Constants.ControlFile.NEW);
            long crc = StrictJson.integer(StrictJson.required(data, Constants.ControlFile.CRC32C),
                    "\"" + Constants.ControlFile.CRC32C + "\"", 0, 0xffffffffL);
            Map<String, Object> covered = new LinkedHashMap<>();
            covered.put(Constants.ControlFile.FORMAT, FORMAT);
            covered.put(Constants.ControlFile.GENERATION, generation);
            covered.put(Constants.ControlFile.OLD, canonicalPairs(old));
            covered.put(Constants.ControlFile.NEW, canonicalPairs(added));
            CRC32C expected = new CRC32C();
            expected.update(CanonicalJson.bytes(covered));
            if (crc != expected.getValue()) {
                throw new IllegalArgumentException("its crc32c " + crc + " does not match its"
                        + " contents (" + expected.getValue() + ")");
            }
            ControlFile control = new ControlFile(generation, old, added);
            List<String> oldNames = control.oldNames();
            if (!oldNames.containsAll(control.newNames())) {
                throw new IllegalArgumentException(
                        "it names files that are not this lane's data files");
            }
            return control;
        } catch (IllegalArgumentException error) {
            throw new CorruptJournalException(path, 0, "compaction control file is damaged ("
                    + error.getMessage() + "). A compaction had committed its swap here, so neither"
                    + " the old nor the new files can be trusted to be whole on their own: restore"
                    + " the lane from a backup, or inspect it with `sparkjournal inspect`");
        }
    }

    /** The swap's number: files.gen holds it once the swap is finished. */
    public long generation() {
        return generation;
    }

    /** (name, file id) of each file the compaction replaces. */
    public List<Map.Entry<String, Long>> old() {
        return old;
    }

    /** (name, file id) of each file it wrote, as {@code <name>.cmp}; every name is an old one. */
    public List<Map.Entry<String, Long>> added() {
        return added;
    }

    public List<String> oldNames() {
        List<String> names = new ArrayList<>();
        old.forEach(pair -> names.add(pair.getKey()));
        return names;
    }

    public List<String> newNames() {
        List<String> names = new ArrayList<>();
        added.forEach(pair -> names.add(pair.getKey()));
        return names;
    }

    /** The field {@code name}: a list of [name, file id] pairs, a string and a u64. */
    /** A data file's name as a control file may name it (FORMAT.md, "Compaction"): never a path. */
    private static final Pattern DATA_FILE_NAME = Pattern.compile("data-[A-Za-z0-9.-]*\\.sjd");

    private static List<Map.Entry<String, Long>> pairs(JsonNode data, String name) {
        List<Map.Entry<String, Long>> out = new ArrayList<>();
        for (JsonNode item : StrictJson.array(data, name)) {
            if (!item.isArray() || item.size() != 2) {
                throw new IllegalArgumentException("\"" + name + "\" holds " + StrictJson.kind(item)
                        + " where a [name, file id] pair belongs");
            }
            String file = StrictJson.stringValue(item.get(0), "a file name in \"" + name + "\"");
            if (!DATA_FILE_NAME.matcher(file).matches()) {
                throw new IllegalArgumentException("\"" + name + "\" names " + Shown.text(file)
                        + ", which is not a data file's name (data-, ASCII letters, digits, '-' or '.', .sjd)");
            }
            out.add(Map.entry(file, StrictJson.u64Value(item.get(1), "a file id in \"" + name + "\"")));
        }
        return out;
    }

    private static List<Object> canonicalPairs(List<Map.Entry<String, Long>> pairs) {
        List<Object> out = new ArrayList<>();
        for (Map.Entry<String, Long> pair : pairs) {
            long id = pair.getValue();
            out.add(List.of(pair.getKey(), id >= 0 ? (Object) id
                    : new BigInteger(Long.toUnsignedString(id))));
        }
        return out;
    }
}
