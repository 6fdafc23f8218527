package io.sparkjournal.journal;

import io.sparkjournal.format.FormatVersionException;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;

/**
 * A lane's compaction control file {@code compact.ctl} (FORMAT.md,
 * "Compaction"; Python: journal/swap.py ControlFile.decode): a compaction
 * whose swap is committed but maybe not finished. JSON
 * {@code {"format": 1, "generation": N, "old": [[name, id], ...], "new": [[name, id], ...],
 * "crc32c": C}}, C the CRC-32C of the object without "crc32c" in Python's
 * canonical form.
 *
 * <p>Decoding checks, in Python's order: the text parses as JSON; a "format"
 * that is an integer above {@link #FORMAT} is refused with
 * FormatVersionException before anything else of it is read; "crc32c" is
 * present and matches; "format" equals 1; generation and pairs convert; every
 * old name is a data file name without a separator, and every new name is an
 * old one. Any failure but the newer format throws CorruptJournalException
 * naming the control file at offset 0: the file is written atomically, so it
 * can only be damaged, and then neither file set can be trusted alone.
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
            Object parsed = JsonText.parse(text(raw));
            if (!(parsed instanceof Map)) {
                throw new IllegalArgumentException("'" + typeName(parsed)
                        + "' object has no attribute 'pop'");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> data = (Map<String, Object>) parsed;
            Object format = data.get("format");
            if (format instanceof BigInteger
                    && ((BigInteger) format).compareTo(BigInteger.valueOf(FORMAT)) > 0) {
                throw new FormatVersionException("compaction control file", path,
                        ((BigInteger) format).longValue(), FORMAT);
            }
            if (!data.containsKey("crc32c")) {
                throw new IllegalArgumentException("'crc32c'");
            }
            Object crc = data.remove("crc32c");
            CRC32C expected = new CRC32C();
            expected.update(PythonText.canonical(data).getBytes(StandardCharsets.UTF_8));
            if (!pyEquals(crc, expected.getValue())) {
                throw new IllegalArgumentException("checksum mismatch");
            }
            if (!data.containsKey("format")) {
                throw new IllegalArgumentException("'format'");
            }
            if (!pyEquals(format, FORMAT)) {
                throw new IllegalArgumentException("format " + PythonText.repr(format)
                        + ", expected " + FORMAT);
            }
            ControlFile control = new ControlFile(toInt(field(data, "generation")),
                    pairs(field(data, "old")), pairs(field(data, "new")));
            List<String> oldNames = control.oldNames();
            for (String name : oldNames) {
                if (!LaneFiles.isDataFileName(name) || name.indexOf('/') >= 0) {
                    throw new IllegalArgumentException(
                            "it names files that are not this lane's data files");
                }
            }
            if (!oldNames.containsAll(control.newNames())) {
                throw new IllegalArgumentException(
                        "it names files that are not this lane's data files");
            }
            return control;
        } catch (IllegalArgumentException | ClassCastException | StackOverflowError error) {
            String why = error instanceof StackOverflowError ? "maximum recursion depth exceeded"
                    : error.getMessage();
            throw new CorruptJournalException(path, 0, "compaction control file is damaged ("
                    + why + "). A compaction had committed its swap here, so neither the old"
                    + " nor the new files can be trusted to be whole on their own: restore the"
                    + " lane from a backup, or inspect it with `sparkjournal inspect`");
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

    /** UTF-8 strictly (a leading BOM is dropped, as json.loads does for bytes). */
    private static String text(byte[] raw) {
        int skip = raw.length >= 3 && (raw[0] & 0xff) == 0xef && (raw[1] & 0xff) == 0xbb
                && (raw[2] & 0xff) == 0xbf ? 3 : 0;
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw, skip, raw.length - skip)).toString();
        } catch (CharacterCodingException bad) {
            throw new IllegalArgumentException("'utf-8' codec can't decode the control file");
        }
    }

    private static Object field(Map<String, Object> data, String key) {
        if (!data.containsKey(key)) {
            throw new IllegalArgumentException("'" + key + "'");
        }
        return data.get(key);
    }

    /** Python's {@code ==} between a JSON value and an integer (True == 1, 1.0 == 1). */
    private static boolean pyEquals(Object value, long number) {
        if (value instanceof BigInteger) {
            return value.equals(BigInteger.valueOf(number));
        }
        if (value instanceof Boolean) {
            return number == (((Boolean) value) ? 1 : 0);
        }
        return value instanceof Double && (Double) value == (double) number;
    }

    /**
     * Python's {@code int(value)} for a JSON value, limited to 64 bits (a long, a u64
     * read unsigned): Python takes any size, this refuses a bigger one as damage.
     */
    private static long toInt(Object value) {
        BigInteger number;
        if (value instanceof BigInteger) {
            number = (BigInteger) value;
        } else if (value instanceof Boolean) {
            number = ((Boolean) value) ? BigInteger.ONE : BigInteger.ZERO;
        } else if (value instanceof Double) {
            double d = (Double) value;
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new IllegalArgumentException("cannot convert float " + PythonText.repr(value)
                        + " to integer");
            }
            number = new java.math.BigDecimal(d).toBigInteger();
        } else if (value instanceof String) {
            String s = ((String) value).strip();
            if (!s.matches("[+-]?[0-9]+(_[0-9]+)*")) {
                throw new IllegalArgumentException("invalid literal for int() with base 10: "
                        + PythonText.repr(value));
            }
            number = new BigInteger(s.replace("_", "").replace("+", ""));
        } else {
            throw new IllegalArgumentException("int() argument must be a string, a bytes-like"
                    + " object or a real number, not '" + typeName(value) + "'");
        }
        if (number.bitLength() > (number.signum() < 0 ? 63 : 64)) {
            throw new IllegalArgumentException("int " + number + " does not fit 64 bits");
        }
        return number.longValue();
    }

    /** [[name, id], ...] as (str(name), int(id)) pairs. */
    private static List<Map.Entry<String, Long>> pairs(Object value) {
        if (!(value instanceof List)) {
            throw new IllegalArgumentException("expected a list of [name, file id] pairs, not "
                    + PythonText.repr(value));
        }
        List<Map.Entry<String, Long>> out = new ArrayList<>();
        for (Object item : (List<?>) value) {
            if (!(item instanceof List) || ((List<?>) item).size() != 2) {
                throw new IllegalArgumentException("expected a [name, file id] pair, not "
                        + PythonText.repr(item));
            }
            Object name = ((List<?>) item).get(0);
            out.add(Map.entry(name instanceof String ? (String) name : PythonText.repr(name),
                    toInt(((List<?>) item).get(1))));
        }
        return out;
    }

    private static String typeName(Object value) {
        if (value instanceof List) {
            return "list";
        }
        if (value instanceof String) {
            return "str";
        }
        if (value instanceof BigInteger) {
            return "int";
        }
        if (value instanceof Double) {
            return "float";
        }
        if (value instanceof Boolean) {
            return "bool";
        }
        return value == JsonText.NULL ? "NoneType" : "dict";
    }
}
