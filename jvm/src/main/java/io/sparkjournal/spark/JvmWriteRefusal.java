package io.sparkjournal.spark;

/**
 * Why the connector's own write cannot write a {@code format("sparkjournal")}
 * write that is otherwise valid: journal options the JVM task writer does not
 * enforce, a commit log that is not on a local path, executors not given the
 * connector, a column type it cannot convert. With {@code writer=auto} the
 * table then hands the write to the Python data source's writer, saying why in
 * the log ({@link JournalTable#newWriteBuilder}); with {@code writer=jvm} this
 * is the write's error. A wrong option is an {@link OptionException}, never
 * this: it fails the write whichever writer is asked for.
 */
final class JvmWriteRefusal extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    JvmWriteRefusal(String message, Throwable cause) {
        super(message, cause);
    }
}
