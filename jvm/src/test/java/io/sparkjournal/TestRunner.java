package io.sparkjournal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Runs the connector's Java unit tests (tests/test_jvm_unit.py runs it over
 * every {@code *Test} class of jvm/src/test/java). No test framework: a test
 * is a {@code public static void} method without parameters whose name starts
 * with {@code test}, of a public class; it passes when it returns and fails
 * when it throws.
 *
 * <pre>TestRunner CLASS...</pre>
 *
 * Runs every test of each named class, classes in argument order, a class's
 * tests in name order. Prints one line per failed test, {@code FAILED
 * Class.method: the exception (at File.java:line)}, the line being the
 * deepest one of the test's own class, then as its last line {@code N
 * passed, M failed} alone. Exit 0 when none failed, 1 when some did, 2 when
 * a class cannot be loaded or holds no test.
 */
public final class TestRunner {

    private TestRunner() {
    }

    public static void main(String[] args) {
        if (args.length == 0) {
            System.err.println("usage: TestRunner CLASS...");
            System.exit(2);
        }
        List<Method> tests = new ArrayList<>();
        for (String name : args) {
            List<Method> found;
            try {
                found = testsOf(Class.forName(name));
            } catch (ClassNotFoundException | LinkageError missing) {
                System.err.println("cannot load test class " + name + ": " + missing);
                System.exit(2);
                return;
            }
            if (found.isEmpty()) {
                System.err.println(name + " holds no public static void test*() method");
                System.exit(2);
            }
            tests.addAll(found);
        }
        int failed = 0;
        for (Method test : tests) {
            Throwable failure = run(test);
            if (failure != null) {
                failed++;
                System.out.println("FAILED " + test.getDeclaringClass().getSimpleName() + "."
                        + test.getName() + ": " + failure + where(failure, test.getDeclaringClass()));
            }
        }
        System.out.println((tests.size() - failed) + " passed, " + failed + " failed");
        System.out.flush();
        System.exit(failed == 0 ? 0 : 1);
    }

    /** The class's tests, in name order. */
    static List<Method> testsOf(Class<?> type) {
        List<Method> tests = new ArrayList<>();
        for (Method method : type.getMethods()) {
            int modifiers = method.getModifiers();
            if (method.getName().startsWith("test") && Modifier.isStatic(modifiers)
                    && method.getParameterCount() == 0 && method.getReturnType() == void.class
                    && method.getDeclaringClass() == type) {
                tests.add(method);
            }
        }
        tests.sort(Comparator.comparing(Method::getName));
        return tests;
    }

    /** Null when the test returned, else what it threw. */
    private static Throwable run(Method test) {
        try {
            test.invoke(null);
            return null;
        } catch (InvocationTargetException thrown) {
            return thrown.getCause();
        } catch (IllegalAccessException | RuntimeException notRun) {
            return notRun;
        }
    }

    /** " (at File.java:line)" of the deepest frame in {@code type}, or "" if none. */
    private static String where(Throwable failure, Class<?> type) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            for (StackTraceElement frame : cause.getStackTrace()) {
                if (frame.getClassName().startsWith(type.getName())) {
                    return " (at " + frame.getFileName() + ":" + frame.getLineNumber() + ")";
                }
            }
        }
        return "";
    }
}
