package io.sparkjournal;

import java.util.Arrays;
import java.util.Objects;

/**
 * The checks the Java unit tests make. Each throws an AssertionError saying
 * what was expected and what was found when its check fails.
 */
public final class Expect {

    /** A piece of code that may throw anything. */
    @FunctionalInterface
    public interface Code {
        void run() throws Exception;
    }

    private Expect() {
    }

    public static void equal(Object expected, Object actual, String what) {
        boolean same = expected instanceof byte[] e && actual instanceof byte[] a
                ? Arrays.equals(e, a)
                : expected instanceof long[] e2 && actual instanceof long[] a2
                ? Arrays.equals(e2, a2) : Objects.equals(expected, actual);
        if (!same) {
            throw new AssertionError(what + ": expected " + shown(expected) + ", found "
                    + shown(actual));
        }
    }

    public static void isTrue(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }

    /** What {@code code} threw, which must be a {@code kind}; fails if it returned or threw
     *  anything else. */
    public static <T extends Throwable> T raises(Class<T> kind, Code code) {
        try {
            code.run();
        } catch (Throwable thrown) {
            if (kind.isInstance(thrown)) {
                return kind.cast(thrown);
            }
            throw new AssertionError("expected " + kind.getSimpleName() + ", got " + thrown, thrown);
        }
        throw new AssertionError("expected " + kind.getSimpleName() + ", nothing was thrown");
    }

    /** {@code text} must contain every one of {@code parts}. */
    public static void contains(String text, String... parts) {
        for (String part : parts) {
            if (text == null || !text.contains(part)) {
                throw new AssertionError("expected " + shown(part) + " in " + shown(text));
            }
        }
    }

    private static String shown(Object value) {
        if (value instanceof byte[] bytes) {
            return Arrays.toString(bytes);
        }
        if (value instanceof long[] longs) {
            return Arrays.toString(longs);
        }
        return value instanceof String ? "\"" + value + "\"" : String.valueOf(value);
    }
}
