package io.sparkjournal.spark;

import io.sparkjournal.events.TaskWriteOptions;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The options of a {@code format("sparkjournal")} write through the
 * connector's own write, parsed on the driver from the user's strings so that
 * anything wrong fails before a task runs, as the Python data source parses
 * them: the write options (declared in config.py's SINK table:
 * {@code txnAppId}, {@code txnVersion}, {@code commitLog}, {@code writer};
 * {@code smallBatchRows} is the foreachBatch sink's and has no effect here),
 * Spark's own ({@code path}) and the journal options, each by its one
 * definition ({@link OptionKinds}); an unknown name is refused naming the
 * known ones. The journal options come out RESOLVED: every option of
 * the options' one declaration at its default, then the file
 * SPARKJOURNAL_CONF names (read on the driver), then the options given.
 *
 * <p>The JVM task writer enforces every journal option
 * ({@link TaskWriteOptions}); one it does not know (an option declared in
 * config.py that the JVM has not placed yet) is a {@link JvmWriteRefusal}
 * naming it: {@code writer=auto} then takes the Python data source's writer,
 * {@code writer=jvm} fails.
 */
record WriteOptions(String path, String commitLog, String txnAppId, Long txnVersion, String writer,
                    HashMap<String, Object> journal) {

    /** config.CONF_ENV. */
    static final String CONF_ENV = "SPARKJOURNAL_CONF";
    /** format.layout.FILE_HEADER_SIZE. */
    private static final long FILE_HEADER_SIZE = 4096;

    /** The writer option (AUTO, JVM or PYTHON), checked; AUTO when not given. */
    static String writer(Map<String, String> options) {
        for (Map.Entry<String, String> option : options.entrySet()) {
            if (option.getKey().equalsIgnoreCase("writer")) {
                return (String) OptionKinds.parse("writer", option.getValue());
            }
        }
        return "AUTO";
    }

    /** The options Spark passed to a write (see the class); {@link OptionException} names what
     *  is wrong. */
    static WriteOptions parse(Map<String, String> options) {
        String path = null;
        Map<String, Object> sink = new TreeMap<>();
        Map<String, String> given = new TreeMap<>();
        confFile().forEach((key, value) -> given.put(spelled(key), value));
        for (Map.Entry<String, String> option : options.entrySet()) {
            String key = option.getKey();
            String sinkName = OptionNames.sinkOption(key);
            if (key.equalsIgnoreCase("path")) {
                path = option.getValue();
            } else if (sinkName != null) {
                sink.put(sinkName, OptionKinds.parse(sinkName, option.getValue()));
            } else if (!OptionNames.isSparkOwn(key)) {
                given.put(spelled(key), option.getValue());     // over the conf file's
            }
        }
        if (path == null || path.isBlank()) {
            throw new OptionException("the sparkjournal data source needs a path: .save(path), "
                    + ".start(path) or .option('path', ...)");
        }
        HashMap<String, Object> journal = journal(given);
        try {
            TaskWriteOptions.of(journal);
        } catch (IllegalArgumentException refused) {
            throw new JvmWriteRefusal(refused.getMessage(), refused);
        }
        return new WriteOptions(path, (String) sink.get("commitLog"), (String) sink.get("txnAppId"),
                (Long) sink.get("txnVersion"), (String) sink.getOrDefault("writer", "AUTO"), journal);
    }

    /** Every journal option resolved: its default, then {@code given} (raw texts). */
    static HashMap<String, Object> journal(Map<String, String> given) {
        HashMap<String, Object> values = new HashMap<>();
        for (String name : OptionNames.journalOptions()) {
            values.put(name, OptionKinds.defaultOf(name));
        }
        for (Map.Entry<String, String> option : given.entrySet()) {
            String name = OptionNames.journalOption(option.getKey());
            if (name == null) {
                throw OptionException.invalid(option.getKey(), option.getValue(), "nothing: it is not a "
                        + "sparkjournal option (known options: "
                        + String.join(", ", OptionNames.journalOptions()) + ")");
            }
            values.put(name, OptionKinds.parse(name, option.getValue()));
        }
        long fileSize = (Long) values.get("fileSize");
        long bufferSize = (Long) values.get("bufferSize");
        long blockSize = (Long) values.get("deviceBlockSize");
        if (bufferSize > fileSize - FILE_HEADER_SIZE) {          // config._validate's checks
            throw refused("bufferSize", bufferSize, "a size below fileSize - " + FILE_HEADER_SIZE
                    + " bytes (fileSize is " + fileSize + ")");
        }
        if (bufferSize % blockSize != 0) {
            throw refused("bufferSize", bufferSize, "a multiple of deviceBlockSize (" + blockSize + ")");
        }
        return values;
    }

    /** A journal option's own spelling; any other key as it is. */
    private static String spelled(String key) {
        String name = OptionNames.journalOption(key);
        return name == null ? key : name;
    }

    /** The options of the file SPARKJOURNAL_CONF names (config.read_conf_file), or none. */
    static Map<String, String> confFile() {
        String named = System.getenv(CONF_ENV);
        Map<String, String> options = new TreeMap<>();
        if (named == null || named.isEmpty()) {
            return options;
        }
        List<String> lines;
        try {
            lines = Files.readAllLines(Paths.get(named), StandardCharsets.UTF_8);
        } catch (IOException error) {
            throw new UncheckedIOException("cannot read " + CONF_ENV + "=" + named + ": " + error, error);
        }
        for (int number = 1; number <= lines.size(); number++) {
            String line = lines.get(number - 1).split("#", 2)[0].strip();
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split("\\s*=\\s*|\\s+", 2);
            if (parts.length != 2 || parts[1].isEmpty()) {
                throw OptionException.invalid(named + ":" + number, line,
                        "lines of the form `key value` or `key=value`");
            }
            options.put(parts[0], parts[1]);
        }
        return options;
    }

    private static OptionException refused(String name, long value, String accepts) {
        return new OptionException("option " + name + "=" + value + " is not valid: " + name
                + " accepts " + accepts);
    }
}
