package io.sparkjournal.spark;

import static io.sparkjournal.Expect.contains;
import static io.sparkjournal.Expect.equal;
import static io.sparkjournal.Expect.isTrue;
import static io.sparkjournal.Expect.raises;

/** {@link ConnectorBuild}: the jar says what it was built for, and refuses another Spark major. */
public final class ConnectorBuildTest {

    private ConnectorBuildTest() {
    }

    public static void testTheJarNamesTheSparkAndSparkjournalVersionsItWasBuiltFor() {
        isTrue(ConnectorBuild.sparkVersion().matches("\\d+\\.\\d+\\.\\d+.*"),
                "the Spark version the build recorded: " + ConnectorBuild.sparkVersion());
        isTrue(!ConnectorBuild.version().isEmpty(), "sparkjournal's version is recorded");
        equal(org.apache.spark.package$.MODULE$.SPARK_VERSION(), ConnectorBuild.sparkVersion(),
                "built against the pyspark whose jars run it");
    }

    public static void testASparkOfTheSameMajorVersionIsAccepted() {
        String built = ConnectorBuild.sparkVersion();
        ConnectorBuild.requireSparkMajor(built);
        ConnectorBuild.requireSparkMajor(ConnectorBuild.major(built) + ".99.0");
        ConnectorBuild.requireSparkMajor();
    }

    public static void testASparkOfAnotherMajorVersionIsRefusedNamingBothAndWhatToDo() {
        String message = raises(IllegalStateException.class,
                () -> ConnectorBuild.requireSparkMajor("3.5.1")).getMessage();
        contains(message, "was built for Spark " + ConnectorBuild.sparkVersion(),
                "the running Spark is 3.5.1", "built against Spark 3.x", "--jars");
    }
}
