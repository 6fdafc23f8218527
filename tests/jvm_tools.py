"""The JVM test tools and Java unit tests (``<repo>/jvm/src/test/java``), built
into a jar of their own: the connector's jar (jvm_build) never holds them.

Contract:

* ``tools_jar()`` returns the path of a jar of every class compiled from
  ``jvm/src/test/java/**.java`` (``javac --release jvm_build.JAVA_RELEASE``)
  against the connector's jar (``jvm_build.jvm_jar()``) and every jar of the
  installed pyspark. It raises ``jvm_build.JvmUnavailableError`` when the
  connector's jar cannot be built (callers skip, as every JVM test does), and
  ``ToolsBuildError`` with javac's output when the test sources do not compile:
  that fails a test, never skips it.
* The jar lives in the JVM build cache, never in the repository:
  ``<jvm_build.cache_root()>/tests/<key>/sparkjournal-jvm-tests.jar``, ``<key>``
  the sha256 of the test sources (their paths and bytes), the connector jar's
  bytes, pyspark's version and the release: any change builds a new jar, none
  reuses the one built.
* A build compiles into a temporary folder beside the jar and renames the
  finished jar into place, under an exclusive lock of the key's folder, as
  jvm_build does: concurrent builders wait for one build, nobody sees half a jar.
* ``tools_classpath()``: "connector jar:tools jar:the Jackson jars Spark ships",
  enough for every tool that needs no Arrow or Spark classes at run time (those
  add ``<pyspark>/jars/*``).
"""
from __future__ import annotations

import glob
import os

from sparkjournal.spark import jvm_build

TEST_SOURCE_DIR = os.path.join(jvm_build.JVM_DIR, "src", "test", "java")
TOOLS_JAR_NAME = "sparkjournal-jvm-tests.jar"
JACKSON_JARS = ("jackson-core-*.jar", "jackson-databind-*.jar", "jackson-annotations-*.jar")


class ToolsBuildError(RuntimeError):
    """The test sources do not compile; the message holds javac's output."""


def tools_classpath() -> str:
    """The connector jar, the tools jar and the Jackson jars Spark ships, joined by os.pathsep."""
    spark_jars = jvm_build._pyspark_jars()[1]
    jackson = [path for name in JACKSON_JARS
               for path in sorted(glob.glob(os.path.join(spark_jars, name)))]
    return os.pathsep.join([jvm_build.jvm_jar(), tools_jar(), *jackson])


def tools_jar() -> str:
    """The path of the jar built from the current test sources, built first if needed."""
    main_jar = jvm_build.jvm_jar()
    spark_version, spark_jars = jvm_build._pyspark_jars()
    sources = tool_sources()
    key = tools_key(sources, main_jar, spark_version)
    folder = os.path.join(jvm_build.cache_root(), "tests", key)
    jar = os.path.join(folder, TOOLS_JAR_NAME)
    if os.path.isfile(jar):
        return jar
    javac = jvm_build.javac_path()
    jvm_build.build_once(folder, jar, lambda: _build(javac, sources, main_jar, spark_jars, folder, jar))
    return jar


def tool_sources() -> list[str]:
    """Every .java file under jvm/src/test/java, sorted."""
    found = sorted(os.path.join(where, name) for where, _dirs, names in os.walk(TEST_SOURCE_DIR)
                   for name in names if name.endswith(".java"))
    if not found:
        raise ToolsBuildError(f"no .java files under {TEST_SOURCE_DIR}")
    return found


def tools_key(sources: list[str], main_jar: str, spark_version: str) -> str:
    """jvm_build's key of the test sources (below jvm/src/test/java), with the
    connector jar's bytes in place of resources."""
    with open(main_jar, "rb") as handle:
        return jvm_build.source_key(sources, spark_version, {"main jar": handle.read()},
                                    base=TEST_SOURCE_DIR)


def _build(javac: str, sources: list[str], main_jar: str, spark_jars: str, folder: str,
           jar: str) -> None:
    """The tools jar, compiled against the connector's jar and pyspark's jars."""
    classpath = os.pathsep.join([main_jar, os.path.join(spark_jars, "*")])
    try:
        jvm_build.compile_jar(javac, sources, classpath, {}, folder, jar)
    except jvm_build.JvmUnavailableError as error:
        raise ToolsBuildError(str(error)) from None


def pyspark_jars_digest() -> dict:
    """{path: sha256} of every file under the installed pyspark's jars/ folder:
    what sparkjournal must never change."""
    import hashlib
    from sparkjournal.spark.old_placement import jars_folder
    found = {}
    for where, _dirs, names in os.walk(jars_folder()):
        for name in names:
            with open(os.path.join(where, name), "rb") as handle:
                found[os.path.join(where, name)] = hashlib.sha256(handle.read()).hexdigest()
    return found
