"""sparkjournal's JVM connector in a Spark session, the ecosystem's way: its
jar is shipped with the session (``spark.jars`` / ``--jars``), never copied
into pyspark or ``SPARK_HOME``.

* ``jar_path()``: the jar. An installed wheel carries it (``sparkjournal/jars/
  sparkjournal-<version>-spark<x.y>.jar``, built with the package, setup.py);
  a checkout or an editable install builds it from ``jvm/src/main`` when the
  sources change (jvm_build.py, into its cache).
* ``configure(builder)``: adds it to a ``SparkSession.builder``'s
  ``spark.jars`` (kept with any jars already named), for a session not yet
  started: the driver and every executor load it from the start.
* ``attach(spark)``: for a session already running without it (spark-submit
  without ``--jars``, a notebook's session). Runs once per application, at the
  first sparkjournal call on the session (JournalSink's first batch,
  ``sparkjournal.read``, ``delete``, ``register``, the jobs). The driver's
  class loader gets the jar (the one every py4j and query thread of a
  spark-submit driver uses), and ``SparkContext.addJar`` ships it to the
  executors, which load it before their next task. From then on
  ``format("sparkjournal")`` is the JVM connector and the JVM task writer
  can run.
* ``executors_can_load(spark)``: whether the executors have it (a local
  master's executor is the driver's JVM; elsewhere the jar must be shipped -
  spark.jars, or YARN's spark.yarn.dist.jars - named in
  ``spark.executor.extraClassPath``, or declared on the executors' own class
  path with ``spark.sparkjournal.executorsHaveConnector=true``), for
  JournalSink's ``writer="auto"``; the JVM reader checks the same
  (ConnectorBuild.java).

``SPARKJOURNAL_JVM=off`` leaves a session as it is (the Python data source
then serves ``format("sparkjournal")``); so does a session with no JVM of its
own (Spark Connect), and, with one warning saying what is lost, a machine
where the jar cannot be had (a checkout without a JDK).
"""
from __future__ import annotations

import glob
import logging
import os

from . import jvm_build, old_placement

log = logging.getLogger("sparkjournal.jvm")
ENV = "SPARKJOURNAL_JVM"                       # "off": sessions are left as they are
# Set where the executors' own class path holds the jar (a cluster image's SPARK_HOME/jars)
EXECUTORS_HAVE_IT = "spark.sparkjournal.executorsHaveConnector"
PROVIDER = "io.sparkjournal.spark.JournalProvider"
PACKAGED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "jars")
_attached: dict[str, str | None] = {}          # application id -> the jar attached, or None
_warned: list = []


def switched_off() -> bool:
    return os.environ.get(ENV, "").strip().lower() in ("off", "0", "false", "no")


def packaged_jar() -> str | None:
    """The jar an installed wheel carries, or None (a checkout, an editable
    install, or a wheel built without a JDK)."""
    found = sorted(glob.glob(os.path.join(PACKAGED, "sparkjournal-*-spark*.jar")))
    return found[-1] if found else None


def jar_path() -> str:
    """The connector's jar (module doc): a checkout's own build where its
    sources are, else the one the wheel carries; JvmUnavailableError saying
    why there is none."""
    if os.path.isdir(jvm_build.SOURCE_DIR):
        return jvm_build.jvm_jar()
    found = packaged_jar()
    return found if found is not None else jvm_build.jvm_jar()


def jar_unavailable() -> str | None:
    """Why there is no jar here, or None."""
    try:
        jar_path()
    except jvm_build.JvmUnavailableError as error:
        return str(error)
    return None


def configure(builder):
    """``builder`` with the connector's jar added to its ``spark.jars`` (the
    jars already named there, or given to spark-submit, kept); unchanged,
    after one warning, where there is no jar."""
    if switched_off():
        return builder
    try:
        jar = jar_path()
    except jvm_build.JvmUnavailableError as error:
        _warn_once(error)
        return builder
    jars = [j for j in _configured_jars(builder) if j and os.path.basename(j) != os.path.basename(jar)]
    return builder.config("spark.jars", ",".join(jars + [jar]))


def _configured_jars(builder) -> list[str]:
    """The jars the session would ship without us, all of which the builder's
    spark.jars must keep naming (it replaces theirs): the builder's own, else
    those spark-submit gave a driver JVM already running (its system
    properties), or else those the JVM pyspark is about to launch will get
    (PYSPARK_SUBMIT_ARGS's --jars, spark.jars in spark-defaults.conf)."""
    named = getattr(builder, "_options", {}).get("spark.jars")
    if named is not None:
        return [j.strip() for j in named.split(",")]
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        from pyspark import SparkConf
        return [j.strip() for j in SparkConf().get("spark.jars", "").split(",")]
    found = []
    args = os.environ.get("PYSPARK_SUBMIT_ARGS", "").split()
    for flag, value in zip(args, args[1:]):
        if flag == "--jars":
            found += value.split(",")
    if not found:
        found += _spark_defaults().get("spark.jars", "").split(",")
    return [j.strip() for j in found]


def _spark_defaults() -> dict:
    """spark-defaults.conf of $SPARK_CONF_DIR, else of $SPARK_HOME/conf (or pyspark's)."""
    folder = os.environ.get("SPARK_CONF_DIR") or os.path.join(
        os.environ.get("SPARK_HOME") or os.path.dirname(old_placement.jars_folder()), "conf")
    found = {}
    try:
        with open(os.path.join(folder, "spark-defaults.conf"), encoding="utf-8") as handle:
            for line in handle:
                parts = line.strip().split(None, 1)
                if len(parts) == 2 and not parts[0].startswith("#"):
                    found[parts[0]] = parts[1].strip()
    except OSError:
        pass
    return found


def attach(spark) -> str | None:
    """Makes the running session load the connector (module doc); the jar, or
    None where it does not (and then why was logged once)."""
    if switched_off():
        return None
    try:
        jvm, sc = spark._jvm, spark.sparkContext
        app = sc.applicationId
    except Exception:                  # noqa: BLE001 - no py4j gateway: Spark Connect
        return None
    if _attached.get(app):
        return _attached[app]
    jar = None
    try:
        jar = jar_path()
        loader = _session_loader(jvm)
        if not _loads(jvm, loader):
            loader.addURL(jvm.java.io.File(jar).toURI().toURL())
            log.info("sparkjournal's JVM connector added to the running session from %s", jar)
    except jvm_build.JvmUnavailableError as error:
        _warn_once(error)
        return None
    except Exception as error:         # noqa: BLE001 - py4j: a loader without addURL, a stopped context
        _warn_once(f"the running driver's JVM did not take {jar}: {str(error).splitlines()[0][:300]}")
        return None
    try:
        if not _shipped(sc):
            sc._jsc.sc().addJar(jar)
    except Exception as error:         # noqa: BLE001 - py4j
        log.warning("sparkjournal's JVM connector is in the driver but was not shipped to the "
                    "executors (%s): reads on a cluster fail at planning and the sink writes with "
                    "Python workers; start the session with spark-submit --jars \"$(sparkjournal "
                    "jar)\"", str(error).splitlines()[0][:300])
    _attached[app] = jar
    return jar


def _session_loader(jvm):
    """The class loader to give the jar: the outermost of Spark's mutable loaders
    around this thread's context loader (spark-submit's, the parent of any a
    session's ADD JAR put in front of it), so every thread of the driver, whatever
    its context loader, sees the classes."""
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    found, current = loader, loader
    while current is not None:
        if current.getClass().getName().endswith("MutableURLClassLoader"):
            found = current
        current = current.getParent()
    return found


def _loads(jvm, loader) -> bool:
    """Whether ``loader`` (or a parent) already loads the connector."""
    try:
        jvm.java.lang.Class.forName(PROVIDER, False, loader)
        return True
    except Exception:                  # noqa: BLE001 - py4j's ClassNotFoundException
        return False


def shipped_jars(sc) -> list[str]:
    """The file names of the jars the session ships to its executors."""
    listed = sc._jsc.sc().listJars()
    return [os.path.basename(str(listed.apply(i))) for i in range(listed.size())]


def _shipped(sc, names: list[str] | None = None) -> bool:
    """Whether the session ships a sparkjournal jar (among ``names``, if listed already)."""
    return any(name.startswith("sparkjournal") and name.endswith(".jar")
               for name in (shipped_jars(sc) if names is None else names))


def executors_can_load(spark) -> tuple[bool, str]:
    """(whether the session's executors load the connector, why not)."""
    sc = spark.sparkContext
    if sc.master == "local" or sc.master.startswith("local["):
        return True, ""
    conf, shipped = sc.getConf(), shipped_jars(sc)
    if _shipped(sc, shipped) or conf.get(EXECUTORS_HAVE_IT, "false").lower() == "true" or any(
            "sparkjournal" in conf.get(key, "") for key in ("spark.executor.extraClassPath",
                                                             "spark.yarn.dist.jars")):
        return True, ""
    return False, (f"the executors of master {sc.master} are not given sparkjournal's connector "
                   f"jar (spark.jars names {', '.join(shipped) or 'none'}): start the "
                   f"session with spark-submit --jars \"$(sparkjournal jar)\" or "
                   f"sparkjournal.configure(SparkSession.builder)")


def reads_through_jvm(frame) -> bool:
    """Whether ``frame``'s plan scans a journal through the JVM connector (its
    BatchScan; the Python data source's is marked "(Python)")."""
    plan = frame._jdf.queryExecution().executedPlan().toString()
    return any(line.strip().startswith(("BatchScan sparkjournal", "+- BatchScan sparkjournal"))
               and "(Python)" not in line for line in plan.splitlines())


def _warn_once(why) -> None:
    if not _warned:
        _warned.append(why)
        log.warning("sparkjournal's JVM connector is not loaded (%s): spark.read.format("
                    "'sparkjournal') stays the Python data source, without column pruning, "
                    "columnar batches or preferred locations, and sink tasks write in Python "
                    "workers; on a cluster of separate hosts read with sparkjournal.read(spark, "
                    "path)", why)
