package io.sparkjournal.spark;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Properties;
import org.apache.spark.SparkContext;
import scala.collection.Iterator;

/**
 * What this jar was built for - {@code io/sparkjournal/build.properties},
 * written by the build (sparkjournal/spark/jvm_build.py): the Spark version
 * it was compiled against and sparkjournal's - and the two checks a session
 * makes before it uses the connector:
 *
 * <ul>
 *   <li>{@link #requireSparkMajor()}: the jar runs only in a Spark of the major
 *       version it was compiled against (DataSource V2's interfaces change
 *       between majors); another fails the read or write that would use it,
 *       naming both versions, before anything is read or written. Loading
 *       the jar alone never fails: Spark instantiates every data source of
 *       the class path to look up any format name;</li>
 *   <li>{@link #requireOnExecutors}: a read runs the lane readers in the
 *       executors' JVMs, which must be able to load this jar: the session
 *       ships it (spark.jars, {@code --jars}, SparkContext.addJar, YARN's
 *       spark.yarn.dist.jars), names it in spark.executor.extraClassPath, says
 *       the executors' own class path has it ({@value #EXECUTORS_HAVE_IT}=true:
 *       a cluster image with the jar in its SPARK_HOME/jars), or its executor
 *       is the driver's own JVM (a local master). Otherwise the read fails at
 *       planning, naming how to ship it, rather than in every task.</li>
 * </ul>
 */
public final class ConnectorBuild {

    static final String RESOURCE = "/io/sparkjournal/build.properties";
    /** The Spark conf the Python side sets when the executors have the connector's jar. */
    static final String EXECUTORS_HAVE_IT = "spark.sparkjournal.executorsHaveConnector";
    private static final Properties BUILD = load();

    private ConnectorBuild() {
    }

    private static Properties load() {
        Properties found = new Properties();
        try (InputStream in = ConnectorBuild.class.getResourceAsStream(RESOURCE)) {
            if (in != null) {
                found.load(in);
            }
        } catch (IOException unreadable) {
            // left empty: the checks then say the jar is damaged
        }
        return found;
    }

    /** The Spark version this jar was compiled against ("" if the jar does not say). */
    public static String sparkVersion() {
        return BUILD.getProperty("spark.version", "");
    }

    /** sparkjournal's version, as the build recorded it. */
    public static String version() {
        return BUILD.getProperty("sparkjournal.version", "");
    }

    /** The major version of a Spark version string ("4" of "4.3.0"). */
    static String major(String sparkVersion) {
        int dot = sparkVersion.indexOf('.');
        return dot < 0 ? sparkVersion : sparkVersion.substring(0, dot);
    }

    /** Fails where the running Spark's major version is not the one the jar was built for. */
    public static void requireSparkMajor() {
        requireSparkMajor(org.apache.spark.package$.MODULE$.SPARK_VERSION());
    }

    static void requireSparkMajor(String running) {
        String built = sparkVersion();
        if (built.isEmpty()) {
            throw new IllegalStateException("sparkjournal's connector jar " + jarName() + " does not "
                    + "say which Spark it was built for (no " + RESOURCE + "): it is not a jar "
                    + "sparkjournal built; use the one `sparkjournal jar` prints");
        }
        if (!major(built).equals(major(running))) {
            throw new IllegalStateException("sparkjournal's connector jar " + jarName() + " (sparkjournal "
                    + version() + ") was built for Spark " + built + " and the running Spark is "
                    + running + ": a jar runs only in the Spark major version it was built for. Install "
                    + "a sparkjournal built against Spark " + major(running) + ".x (pip install "
                    + "sparkjournal beside pyspark " + major(running) + ".x builds one) and ship "
                    + "its jar (spark-submit --jars \"$(sparkjournal jar)\"), or take this jar off the "
                    + "session's class path to read and write through the Python data source");
        }
    }

    /** Fails, naming {@code what} and how to ship the jar, where the executors of {@code sc}
     *  cannot load this jar (see the class). */
    public static void requireOnExecutors(SparkContext sc, String what) {
        if (sc.isLocal() || sc.master().startsWith("local[")) {
            return;
        }
        if (sc.conf().get("spark.executor.extraClassPath", "").contains("sparkjournal")
                || sc.conf().get("spark.yarn.dist.jars", "").contains("sparkjournal")
                || sc.conf().getBoolean(EXECUTORS_HAVE_IT, false)) {
            return;
        }
        StringBuilder shipped = new StringBuilder();
        Iterator<String> jars = sc.listJars().iterator();
        while (jars.hasNext()) {
            String name = fileName(jars.next());
            if (name.startsWith("sparkjournal") || name.equals(jarName())) {
                return;
            }
            shipped.append(shipped.length() == 0 ? "" : ", ").append(name);
        }
        throw new IllegalStateException(what + " runs sparkjournal's lane readers in the executors' "
                + "JVMs, and the executors of master " + sc.master() + " are not given its connector "
                + "jar (the session ships " + (shipped.length() == 0 ? "no jars" : shipped) + "). "
                + "Ship it: spark-submit --jars \"$(sparkjournal jar)\", or "
                + "sparkjournal.configure(SparkSession.builder) before the session starts, or call "
                + "any sparkjournal function on the session first (sparkjournal.register(spark) adds "
                + "the jar to a running session); where the executors' own class path has it, set "
                + EXECUTORS_HAVE_IT + "=true");
    }

    /** The file name of the jar this class was loaded from ("" where it cannot be told). */
    static String jarName() {
        try {
            URL where = ConnectorBuild.class.getProtectionDomain().getCodeSource().getLocation();
            return fileName(where.toString());
        } catch (RuntimeException unknown) {
            return "";
        }
    }

    private static String fileName(String uri) {
        String path = uri.replace('\\', '/');
        int slash = path.lastIndexOf('/');
        return slash < 0 ? path : path.substring(slash + 1);
    }
}
