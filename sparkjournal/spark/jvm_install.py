"""Loading the JVM connector without a flag: its jar in the installed
pyspark's ``jars/`` folder, which is on the classpath of every JVM that
pyspark starts - ``spark-submit``, ``pyspark``, a plain
``SparkSession.builder``, and the executors of local, local-cluster and
standalone masters started from the same installation.

``ensure()`` runs once per driver process, when the Spark layer is first
imported (``sparkjournal.spark``): it builds the jar if needed
(jvm_build.py: the installed JDK, against pyspark's own jars, into the cache)
and places it there as ``sparkjournal-jvm.jar``, one name for every version:
a new build replaces the old by an atomic rename, so the file on a JVM's
classpath is never missing (a JVM that opened the old one goes on reading
it; one that opens it after reads the new one whole) and two versions are
never there at once. A session already running keeps what it loaded; the
next one has the current connector. Executors on hosts with their own
installation get the jar the same way from their own drivers, or by
``spark.jars``.

Where it cannot (no JDK, a read-only installation, ``SPARKJOURNAL_JVM=off``)
the Python data source stays ``format("sparkjournal")``, and one warning says
what is lost: column pruning, columnar batches, preferred locations (on
separate hosts, read with ``sparkjournal.read``).

Crash behaviour: the jar is copied under a temporary name that is not a
``.jar`` (so no JVM loads it half written) and renamed over the old one; a
crash leaves at worst that temporary file, removed by the next ``install``.
"""
from __future__ import annotations

import fcntl
import filecmp
import logging
import os
import shutil

from . import jvm_build

log = logging.getLogger("sparkjournal.jvm")
ENV = "SPARKJOURNAL_JVM"                  # "off": leave pyspark's jars alone
NAME = "sparkjournal-jvm.jar"
PARTIAL = ".sparkjournal-jvm-partial"       # a copy being placed: never a .jar
_done: list = []                          # once per process: [the jar placed, or None]


def ensure() -> str | None:
    """The jar's path in pyspark's jars/ folder, placed there if needed; None
    (after one warning) where the connector cannot be loaded."""
    if _done:
        return _done[0]
    placed = None
    if os.environ.get(ENV, "").strip().lower() in ("off", "0", "false", "no"):
        log.info("%s=off: spark.read.format('sparkjournal') is the Python data source", ENV)
    else:
        try:
            placed = install()
        except (jvm_build.JvmUnavailableError, OSError) as error:
            log.warning("sparkjournal's JVM connector is not loaded (%s): spark.read.format("
                        "'sparkjournal') stays the Python data source, without column pruning, "
                        "columnar batches or preferred locations; on a cluster of separate hosts "
                        "read with sparkjournal.read(spark, path)", error)
    _done.append(placed)
    return placed


def install() -> str:
    """Places the current jar in pyspark's jars/ folder (module doc)."""
    jar = jvm_build.jvm_jar()
    target = os.path.join(jars_folder(), NAME)
    if same_file(jar, target):
        return target
    with open(os.path.join(os.path.dirname(os.path.dirname(jar)), ".install.lock"), "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if same_file(jar, target):
            return target
        folder = os.path.dirname(target)
        for name in os.listdir(folder):
            if name.startswith(PARTIAL):
                os.unlink(os.path.join(folder, name))          # a killed install's debris
        partial = os.path.join(folder, f"{PARTIAL}-{os.getpid()}")
        shutil.copyfile(jar, partial)
        os.replace(partial, target)
    log.info("sparkjournal's JVM connector is in %s: sessions started from now on read "
             "format('sparkjournal') through it", target)
    return target


def same_file(built: str, placed: str) -> bool:
    """Whether the jar placed at ``placed`` is the build ``built`` (byte for byte)."""
    try:
        return filecmp.cmp(built, placed, shallow=False)
    except FileNotFoundError:
        return False


def uninstall(folder: str | None = None) -> list[str]:
    """Removes the placed jar (and any partial copy a killed install left)
    from pyspark's jars folder (or ``folder``); returns the names removed.
    ``pip uninstall sparkjournal`` cannot: the folder is pyspark's."""
    folder = folder or jars_folder()
    removed = [name for name in sorted(os.listdir(folder)) if name == NAME or name.startswith(PARTIAL)]
    for name in removed:
        os.unlink(os.path.join(folder, name))
    return removed


def installed() -> str | None:
    """The connector's jar in pyspark's jars/ folder, if one is there."""
    found = os.path.join(jars_folder(), NAME)
    return found if os.path.isfile(found) else None


def jars_folder() -> str:
    import pyspark
    return os.path.join(os.path.dirname(pyspark.__file__), "jars")
