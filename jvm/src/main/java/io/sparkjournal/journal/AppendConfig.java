package io.sparkjournal.journal;

import io.sparkjournal.format.Layout;
import java.util.Map;

/**
 * What a {@link LaneAppender} needs to know of the journal's configuration,
 * with the defaults and checks the options have where they are declared once,
 * sparkjournal/config.py (fileSize, bufferSize, deviceBlockSize, maxIO,
 * userVersion, largeRecordSize). A value the journal could not work with is refused when the
 * config is made, with an IllegalArgumentException naming the option (as
 * users spell it), the value and what it accepts.
 *
 * @param fileSize     size of every data file this writer creates: a multiple of 4096
 *                     from 8 KiB up to 4 GiB - 4 KiB (a file keeps the size it was
 *                     created with; an existing file is filled only up to its own size)
 * @param bufferSize   the write buffer: from 4 KiB, a multiple of blockSize, at most
 *                     fileSize - 4096; a larger record is written alone
 * @param blockSize    the write alignment (option deviceBlockSize): 512, 1024, 2048 or 4096
 * @param maxIO        1..4096; with bufferSize it makes the sync window
 * @param userVersion  the application's version (u32), carried in every header written
 * @param largeRecordSize bodies above this go to the lane's large store (FORMAT.md, "Large
 *                     records"); 0: only bodies whose record would not fit a data file
 */
public record AppendConfig(long fileSize, int bufferSize, int blockSize, int maxIO,
                           long userVersion, long largeRecordSize) {

    public static final long DEFAULT_FILE_SIZE = 10L << 20;
    public static final int DEFAULT_BUFFER_SIZE = 490 << 10;
    public static final int DEFAULT_BLOCK_SIZE = 512;
    public static final int DEFAULT_MAX_IO = 4;
    private static final long MAX_FILE_SIZE = (1L << 32) - Layout.FILE_SIZE_MULTIPLE;

    public AppendConfig {
        if (fileSize < 2L * Layout.FILE_HEADER_SIZE || fileSize > MAX_FILE_SIZE
                || fileSize % Layout.FILE_SIZE_MULTIPLE != 0) {
            throw refused("fileSize", fileSize, "a multiple of 4k from 8k up to 4g - 4k, such as 10m");
        }
        if (blockSize != 512 && blockSize != 1024 && blockSize != 2048 && blockSize != 4096) {
            throw refused("deviceBlockSize", blockSize, "512, 1k, 2k or 4k");
        }
        if (bufferSize < 4096 || bufferSize % blockSize != 0
                || bufferSize > fileSize - Layout.FILE_HEADER_SIZE) {
            throw refused("bufferSize", bufferSize, "a size from 4k, a multiple of deviceBlockSize ("
                    + blockSize + ") and at most fileSize - " + Layout.FILE_HEADER_SIZE
                    + " bytes (fileSize is " + fileSize + ")");
        }
        if (maxIO < 1 || maxIO > 4096) {
            throw refused("maxIO", maxIO, "a whole number from 1 to 4096");
        }
        if (userVersion < 0 || userVersion > 0xFFFFFFFFL) {
            throw refused("userVersion", userVersion, "a whole number from 0 to 4294967295");
        }
        if (largeRecordSize < 0) {
            throw refused("largeRecordSize", largeRecordSize, "a size from 0 (0: only records"
                    + " that do not fit a data file)");
        }
    }

    /** The defaults with {@code largeRecordSize} 0 (only bodies that do not fit a data file
     *  go to the large store). */
    public AppendConfig(long fileSize, int bufferSize, int blockSize, int maxIO, long userVersion) {
        this(fileSize, bufferSize, blockSize, maxIO, userVersion, 0);
    }

    /** Whether a body of {@code bodyLength} bytes is stored as a large record: above
     *  largeRecordSize when set, else when its record would not fit a data file. */
    public boolean goesToLargeStore(long bodyLength) {
        if (largeRecordSize > 0) {
            return bodyLength > largeRecordSize;
        }
        return Layout.recordSize(bodyLength) > fileSize - Layout.FILE_HEADER_SIZE;
    }

    /** The declared defaults: 10 MiB files, a 490 KiB buffer, 512-byte blocks, maxIO 4,
     *  largeRecordSize 0. */
    public static AppendConfig defaults() {
        return new AppendConfig(DEFAULT_FILE_SIZE, DEFAULT_BUFFER_SIZE, DEFAULT_BLOCK_SIZE,
                DEFAULT_MAX_IO, 0);
    }

    /**
     * The defaults with {@code options} applied, by option name (fileSize,
     * bufferSize, deviceBlockSize, maxIO, userVersion, largeRecordSize); each value an integer,
     * already resolved from its unit text by the options' one definition.
     * Any other key is refused: a typo never falls back to a default.
     */
    public static AppendConfig fromOptions(Map<String, ?> options) {
        AppendConfig d = defaults();
        long fileSize = d.fileSize;
        long bufferSize = d.bufferSize;
        long blockSize = d.blockSize;
        long maxIO = d.maxIO;
        long userVersion = d.userVersion;
        long largeRecordSize = d.largeRecordSize;
        for (Map.Entry<String, ?> option : options.entrySet()) {
            String key = option.getKey();
            long value = quantity(key, option.getValue());
            switch (key) {
                case "fileSize": fileSize = value; break;
                case "bufferSize": bufferSize = value; break;
                case "deviceBlockSize": blockSize = value; break;
                case "maxIO": maxIO = value; break;
                case "userVersion": userVersion = value; break;
                case "largeRecordSize": largeRecordSize = value; break;
                default:
                    throw new IllegalArgumentException("option " + key + " is not an option of"
                            + " the JVM appender (known: bufferSize, deviceBlockSize, fileSize,"
                            + " largeRecordSize, maxIO, userVersion)");
            }
        }
        return new AppendConfig(fileSize, narrow("bufferSize", bufferSize),
                narrow("deviceBlockSize", blockSize), narrow("maxIO", maxIO), userVersion,
                largeRecordSize);
    }

    /** Most bytes the writer may have written past its last completed sync: maxIO x bufferSize. */
    public long syncWindow() {
        return (long) maxIO * bufferSize;
    }

    private static long quantity(String key, Object value) {
        if (value instanceof Number number && !(value instanceof Double || value instanceof Float)) {
            return number.longValue();
        }
        throw new IllegalArgumentException("option " + key + " = " + value + " is not a resolved"
                + " integer: the JVM takes option values as sparkjournal.config.load_config"
                + " resolves them, never their text");
    }

    private static int narrow(String key, long value) {
        if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
            throw refused(key, value, "a value below 2 GiB");
        }
        return (int) value;
    }

    private static IllegalArgumentException refused(String key, long value, String accepts) {
        return new IllegalArgumentException("option " + key + " = " + value + " is refused: it"
                + " accepts " + accepts);
    }
}
