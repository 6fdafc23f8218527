package io.sparkjournal.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The option names a read or write knows, what each accepts and (journal and
 * write options) its kind of value, bounds and default, as defined once in
 * Python (sparkjournal/config.py's option tables JOURNAL, SINK and READ, and
 * SPARK_OWN). sparkjournal/spark/jvm_build.py
 * writes them into the jar as {@value #RESOURCE} when it builds it, so the two
 * readers cannot disagree on them. All lookups ignore case, as both readers do.
 */
final class OptionNames {

    static final String RESOURCE = "/io/sparkjournal/spark/options.json";
    private static final Map<String, String> READ = new TreeMap<>();      // lower -> name
    private static final Map<String, String> JOURNAL = new TreeMap<>();   // lower -> name
    private static final Map<String, String> SINK = new TreeMap<>();      // lower -> name
    private static final Map<String, String> ACCEPTS = new TreeMap<>();   // name -> text
    private static final List<String> SPARK_OWN = new ArrayList<>();
    private static final List<String> JOURNAL_NAMES = new ArrayList<>();  // sorted by code point, as shipped
    private static final Map<String, JsonNode> KINDS = new TreeMap<>();   // name -> kind (OptionKinds)

    static {
        try (InputStream in = OptionNames.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("the sparkjournal jar has no " + RESOURCE
                        + ": it was not built by sparkjournal/spark/jvm_build.py");
            }
            JsonNode root = new ObjectMapper().readTree(in);
            named(root.get("read"), READ);
            named(root.get("sink"), SINK);
            for (JsonNode name : root.get("journal")) {
                JOURNAL.put(name.asText().toLowerCase(Locale.ROOT), name.asText());
                JOURNAL_NAMES.add(name.asText());
            }
            Iterator<Map.Entry<String, JsonNode>> kinds = root.get("kinds").fields();
            while (kinds.hasNext()) {
                Map.Entry<String, JsonNode> kind = kinds.next();
                KINDS.put(kind.getKey(), kind.getValue());
            }
            for (JsonNode name : root.get("spark")) {
                SPARK_OWN.add(name.asText().toLowerCase(Locale.ROOT));
            }
        } catch (IOException error) {
            throw new UncheckedIOException(error);
        }
    }

    private OptionNames() {
    }

    private static void named(JsonNode docs, Map<String, String> names) {
        Iterator<Map.Entry<String, JsonNode>> fields = docs.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> field = fields.next();
            names.put(field.getKey().toLowerCase(Locale.ROOT), field.getKey());
            ACCEPTS.put(field.getKey(), field.getValue().asText());
        }
    }

    /** The read option's own spelling, or null when {@code key} is not one. */
    static String readOption(String key) {
        return READ.get(key.toLowerCase(Locale.ROOT));
    }

    static String journalOption(String key) {
        return JOURNAL.get(key.toLowerCase(Locale.ROOT));
    }

    static boolean isSinkOption(String key) {
        return SINK.containsKey(key.toLowerCase(Locale.ROOT));
    }

    static boolean isSparkOwn(String key) {
        return SPARK_OWN.contains(key.toLowerCase(Locale.ROOT));
    }

    static List<String> journalOptions() {
        return JOURNAL_NAMES;
    }

    /** The kind of value of a journal or write option, its bounds and default
     *  (jvm_build.option_kind), by its own spelling; null for another name. */
    static JsonNode kind(String name) {
        return KINDS.get(name);
    }

    /** The write option's own spelling, or null when {@code key} is not one. */
    static String sinkOption(String key) {
        return SINK.get(key.toLowerCase(Locale.ROOT));
    }

    static String accepts(String name) {
        return ACCEPTS.getOrDefault(name, "a valid value");
    }
}
