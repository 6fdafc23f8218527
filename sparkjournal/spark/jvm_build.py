"""Builds the JVM side of sparkjournal (``<repo>/jvm/src/main/java``) into one jar.

Contract:

* ``jvm_jar()`` returns the path of a jar holding every class compiled from
  ``jvm/src/main/java/**.java`` and from the sources generated from the
  shared constants' declaration (``jvm_constants.generated_sources``:
  io.sparkjournal.format.Constants, written into the build's temporary
  folder, never into the source tree), the files under
  ``jvm/src/main/resources`` and what the JVM reader takes from the Python definitions (``jar_resources``:
  the option names, the metadata columns, BUILD_RESOURCE: the Spark and
  sparkjournal versions it was built for), or raises ``JvmUnavailableError``
  saying why there is none; ``jvm_unavailable()`` returns that reason, or None
  when the jar is there. This is the jar of a checkout and of an editable
  install; a wheel carries one built by ``build_jar`` (setup.py), and
  connector.py chooses.
* The sources are found relative to this file: ``<repo>/jvm/src/main`` in a
  checkout and after ``pip install -e .`` (a wheel carries the jar, not them).
* They are compiled with the JDK's ``javac`` (the one on PATH, else
  ``$JAVA_HOME/bin/javac``), ``--release 17``, against every jar of the
  installed pyspark (``<pyspark>/jars/*``).
* The jar lives in a cache folder, never in the repository:
  ``<cache>/<key>/sparkjournal-jvm.jar`` where ``<cache>`` is
  ``$SPARKJOURNAL_JVM_CACHE`` or ``~/.cache/sparkjournal/jvm`` and ``<key>`` is
  the sha256 of the sources, the generated sources and the resources (their
  paths and bytes) and pyspark's version: a
  changed source or another Spark builds a new jar, an unchanged one is
  reused (without needing javac).
* A build compiles into a temporary folder beside the jar and renames the
  finished jar into place (atomic), under an exclusive lock of the key's
  folder: processes that build at once wait for one build, and nobody ever
  sees half a jar.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import zipfile

from ..errors import SparkJournalError
from .jvm_constants import generated_sources

CACHE_ENV = "SPARKJOURNAL_JVM_CACHE"
JAR_NAME = "sparkjournal-jvm.jar"
JAVA_RELEASE = "17"
JVM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "jvm")
# A checkout (or `pip install -e .`) compiles <repo>/jvm/src/main.
_MAIN = os.path.join(JVM_DIR, "src", "main")
SOURCE_DIR = os.path.join(_MAIN, "java")
RESOURCE_DIR = os.path.join(_MAIN, "resources")
OPTIONS_RESOURCE = "io/sparkjournal/spark/options.json"
METADATA_RESOURCE = "io/sparkjournal/spark/metadata.arrow"
BUILD_RESOURCE = "io/sparkjournal/build.properties"
JAVAC_TIMEOUT_S = 600
_MANIFEST = b"Manifest-Version: 1.0\r\nCreated-By: sparkjournal jvm_build\r\n\r\n"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)          # fixed: the same sources give the same jar bytes
_WORK_PREFIX = ".build-"

_failed: dict[str, str] = {}               # key -> javac's complaint, once per process


class JvmUnavailableError(SparkJournalError):
    """The JVM jar cannot be built here; the message says why and what to do."""


def jvm_unavailable() -> str | None:
    """Why there is no JVM jar here (no javac, no pyspark, no sources, a compile
    error with javac's output), or None once the jar is built."""
    try:
        jvm_jar()
    except JvmUnavailableError as error:
        return str(error)
    return None


def jvm_jar() -> str:
    """The path of the jar built from the current sources, built first if needed."""
    sources = java_sources()
    spark_version, spark_jars = _pyspark_jars()
    resources = jar_resources(spark_version)
    generated = generated_sources()
    key = source_key(sources, spark_version, resources, generated=generated)
    folder = os.path.join(cache_root(), key)
    jar = os.path.join(folder, JAR_NAME)
    if os.path.isfile(jar):                    # built before: javac is not needed any more
        return jar
    if key in _failed:
        raise JvmUnavailableError(_failed[key])
    javac = javac_path()
    try:
        build_once(folder, jar, lambda: _build(javac, sources, resources, spark_jars, folder,
                                               jar, key, generated))
    except OSError as error:
        raise JvmUnavailableError(
            f"cannot write the JVM build cache {folder}: {error}; set {CACHE_ENV} to a "
            f"writable folder") from None
    return jar


def build_once(folder: str, jar: str, build) -> None:
    """Runs ``build()`` (which puts ``jar`` in place) under an exclusive lock of
    ``folder``, unless ``jar`` is there already: processes that build at once
    wait for one build (the cache's discipline, module doc)."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, ".build.lock"), "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        if not os.path.isfile(jar):            # another process may have built it meanwhile
            build()


def java_sources() -> list[str]:
    """Every .java file under jvm/src/main/java, sorted."""
    if not os.path.isdir(SOURCE_DIR):
        raise JvmUnavailableError(
            f"the Java sources are not at {SOURCE_DIR} and this installation carries no "
            f"connector jar (its wheel was built without a JDK): install a JDK 17+ and "
            f"reinstall sparkjournal with pip")
    found = [os.path.join(where, name) for where, _dirs, names in os.walk(SOURCE_DIR)
             for name in names if name.endswith(".java")]
    if not found:
        raise JvmUnavailableError(f"no .java files under {SOURCE_DIR}")
    return sorted(found)


def javac_path() -> str:
    """The javac on PATH, else $JAVA_HOME/bin/javac."""
    found = shutil.which("javac")
    if found:
        return found
    home = os.environ.get("JAVA_HOME", "")
    candidate = os.path.join(home, "bin", "javac") if home else ""
    if candidate and os.access(candidate, os.X_OK):
        return candidate
    raise JvmUnavailableError(
        "no javac: install a JDK 17 or newer and put its bin/ on PATH or set JAVA_HOME "
        f"(JAVA_HOME={home or 'unset'})")


def java_path() -> str:
    """The java launcher of the JDK whose javac builds the jar, else the one on PATH."""
    try:
        beside = os.path.join(os.path.dirname(os.path.realpath(javac_path())), "java")
    except JvmUnavailableError:
        beside = ""
    if beside and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("java")
    if not found:
        raise JvmUnavailableError("no java launcher: install a JDK 17 or newer")
    return found


def cache_root() -> str:
    """$SPARKJOURNAL_JVM_CACHE, else ~/.cache/sparkjournal/jvm."""
    configured = os.environ.get(CACHE_ENV, "").strip()
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    return os.path.join(os.path.expanduser("~"), ".cache", "sparkjournal", "jvm")


def jar_file_name(spark_version: str, version: str) -> str:
    """The versioned name a built package gives its jar:
    sparkjournal-<version>-spark<major.minor>.jar."""
    return f"sparkjournal-{version}-spark{'.'.join(spark_version.split('.')[:2])}.jar"


def build_jar(target_folder: str, version: str) -> str:
    """Builds the jar from the current sources into ``target_folder`` under its
    versioned name (setup.py, for a wheel); its path. JvmUnavailableError as
    ``jvm_jar``."""
    sources = java_sources()
    spark_version, spark_jars = _pyspark_jars()
    os.makedirs(target_folder, exist_ok=True)
    jar = os.path.join(target_folder, jar_file_name(spark_version, version))
    compile_jar(javac_path(), sources, os.path.join(spark_jars, "*"),
                jar_resources(spark_version, version), target_folder, jar,
                generated=generated_sources())
    return jar


def package_version() -> str:
    """sparkjournal's version as installed (a checkout never installed: 0+unknown)."""
    from importlib import metadata
    try:
        return metadata.version("sparkjournal")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def jar_resources(spark_version: str | None = None, version: str | None = None) -> dict[str, bytes]:
    """{name in the jar: bytes} of everything the jar holds besides classes: the
    files under jvm/src/main/resources (the DataSourceRegister service entry)
    and, generated from their one Python definition, OPTIONS_RESOURCE (the
    option names and texts a read checks), METADATA_RESOURCE (the metadata
    columns, an Arrow IPC schema) and BUILD_RESOURCE (the Spark version the jar
    is compiled against and sparkjournal's: the jar refuses a Spark of another
    major version, ConnectorBuild.java)."""
    found = {}
    for where, _dirs, names in os.walk(RESOURCE_DIR):
        for name in names:
            path = os.path.join(where, name)
            with open(path, "rb") as handle:
                found[os.path.relpath(path, RESOURCE_DIR).replace(os.sep, "/")] = handle.read()
    found[OPTIONS_RESOURCE] = json.dumps(option_names(), indent=1, sort_keys=True).encode()
    from ..events.read_columns import METADATA
    found[METADATA_RESOURCE] = METADATA.serialize().to_pybytes()
    found[BUILD_RESOURCE] = (f"spark.version={spark_version or _pyspark_jars()[0]}\n"
                             f"sparkjournal.version={version or package_version()}\n").encode()
    return found


def option_names() -> dict:
    """The options the connector knows, from their one definition (config):
    the names and accepted-values texts a read checks, and under "kinds" each
    journal and write option's kind of value, bounds and default
    (``option_kind``), from which a JVM write parses the user's strings."""
    from ..config import JOURNAL, READ, SINK, SPARK_OWN
    return {"journal": sorted(JOURNAL.names),
            "read": {option.name: option.accepts for option in READ},
            "sink": {option.name: option.accepts for option in SINK},
            "spark": list(SPARK_OWN) + ["paths"],
            "kinds": {option.name: option_kind(option) for option in (*JOURNAL, *SINK)}}


def option_kind(option) -> dict:
    """One option's kind of value as JSON (OptionKinds.java parses by it):
    ``kind`` (the config_keys class, lower case), its bounds (Whole: minimum,
    maximum; Size: minimum, maximum, multiple, choices, unlimited; Mode: owner;
    Choice: choices, the names; Text: valid, the name of its check), ``default``
    (the typed default; null: not set; Retention's () is []) and ``accepts``."""
    import dataclasses
    kind = option.kind
    spec = {"kind": type(kind).__name__.lower(), "accepts": option.accepts}
    if dataclasses.is_dataclass(kind):
        for field in dataclasses.fields(kind):
            value = getattr(kind, field.name)
            if field.name in ("example", "note", "accepts"):
                continue
            if field.name == "choices":
                value = [c[0] if isinstance(c, tuple) else c for c in value]
            elif field.name == "valid":
                value = value.__name__
            spec[field.name] = value
    spec["default"] = list(option.default) if isinstance(option.default, tuple) else option.default
    return spec


def source_key(sources: list[str], spark_version: str, resources: dict[str, bytes],
               base: str = SOURCE_DIR, generated: dict[str, str] | None = None) -> str:
    """sha256 of each source's path (below ``base``, jvm/src/main/java) and
    bytes, each generated source's path and text, the resources, and the
    Spark version: what the jar's content depends on."""
    digest = hashlib.sha256()
    for path in sources:
        with open(path, "rb") as handle:
            data = handle.read()
        name = os.path.relpath(path, base).replace(os.sep, "/").encode()
        digest.update(b"%d:%s%d:" % (len(name), name, len(data)))
        digest.update(data)
    for name, text in sorted((generated or {}).items()):
        data = text.encode()
        digest.update(b"generated %d:%s%d:" % (len(name), name.encode(), len(data)))
        digest.update(data)
    for name, data in sorted(resources.items()):
        digest.update(b"resource %d:%s%d:" % (len(name), name.encode(), len(data)))
        digest.update(data)
    digest.update(f"pyspark {spark_version}; --release {JAVA_RELEASE}".encode())
    return digest.hexdigest()


def pyspark_jars_folder() -> str:
    """The installed pyspark's jars/ folder (ImportError without pyspark)."""
    import pyspark
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    home = os.environ.get("SPARK_HOME", "")
    if not os.path.isdir(jars) and home:
        # spark-submit imports pyspark from $SPARK_HOME/python/lib/pyspark.zip
        jars = os.path.join(home, "jars")
    return jars


def _pyspark_jars() -> tuple[str, str]:
    """(pyspark.__version__, its jars/ folder)."""
    try:
        import pyspark
        jars = pyspark_jars_folder()
    except ImportError as error:
        raise JvmUnavailableError(f"pyspark is not installed ({error}): the JVM side compiles "
                                  f"against its jars") from None
    if not os.path.isdir(jars) or not any(n.endswith(".jar") for n in os.listdir(jars)):
        raise JvmUnavailableError(f"pyspark {pyspark.__version__} has no jars in {jars}")
    return pyspark.__version__, jars


def _build(javac: str, sources: list[str], resources: dict[str, bytes], spark_jars: str,
           folder: str, jar: str, key: str, generated: dict[str, str]) -> None:
    """The connector's jar from ``sources`` against pyspark's jars (compile_jar);
    a failure is remembered for ``key``, so this process does not run javac on
    the same sources again."""
    try:
        compile_jar(javac, sources, os.path.join(spark_jars, "*"), resources, folder, jar,
                    generated=generated)
    except JvmUnavailableError as error:
        _failed[key] = str(error)
        raise


def compile_jar(javac: str, sources: list[str], classpath: str, resources: dict[str, bytes],
                folder: str, jar: str, generated: dict[str, str] | None = None) -> None:
    """Compiles ``sources`` and ``generated`` ({path below a source root:
    text}, written under the temporary folder's generated/) against
    ``classpath`` into a temporary folder inside ``folder`` and renames the jar (the classes and ``resources``) into place at
    ``jar``; JvmUnavailableError with javac's output where it fails. Runs under
    the folder's lock, so any other build folder there is debris of a builder
    that was killed."""
    for name in os.listdir(folder):
        if name.startswith(_WORK_PREFIX):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
    work = tempfile.mkdtemp(prefix=_WORK_PREFIX, dir=folder)
    try:
        classes = os.path.join(work, "classes")
        os.mkdir(classes)
        written = []
        for name, text in sorted((generated or {}).items()):
            path = os.path.join(work, "generated", *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            written.append(path)
        argfile = os.path.join(work, "sources.txt")
        with open(argfile, "w", encoding="utf-8") as handle:
            handle.write("".join(f'"{_argfile_quote(path)}"\n' for path in [*sources, *written]))
        command = [javac, "--release", JAVA_RELEASE, "-encoding", "UTF-8", "-d", classes,
                   "-cp", classpath, f"@{argfile}"]
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  timeout=JAVAC_TIMEOUT_S, cwd=work)
        except subprocess.TimeoutExpired:
            raise JvmUnavailableError(f"javac did not finish within {JAVAC_TIMEOUT_S} s: "
                                      f"{' '.join(command)}") from None
        except OSError as error:
            raise JvmUnavailableError(f"cannot run {javac}: {error}") from None
        if done.returncode != 0:
            where = os.path.commonpath(sources) if sources else folder
            raise JvmUnavailableError(f"javac failed (exit {done.returncode}) on {where}:\n"
                                      f"{(done.stdout + done.stderr).strip()}")
        partial = os.path.join(work, os.path.basename(jar))
        _write_jar(classes, resources, partial)
        os.replace(partial, jar)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _write_jar(classes: str, resources: dict[str, bytes], path: str) -> None:
    """A jar of everything under ``classes`` and ``resources``: a manifest, then
    the files in name order."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        manifest = zipfile.ZipInfo("META-INF/MANIFEST.MF", _ZIP_TIME)
        manifest.compress_type = zipfile.ZIP_DEFLATED
        out.writestr(manifest, _MANIFEST)
        files = dict(resources)
        for where, _dirs, names in os.walk(classes):
            for name in names:
                path = os.path.join(where, name)
                with open(path, "rb") as handle:
                    files[os.path.relpath(path, classes).replace(os.sep, "/")] = handle.read()
        for name in sorted(files):
            info = zipfile.ZipInfo(name, _ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(info, files[name])


def _argfile_quote(path: str) -> str:
    """A path as a double-quoted javac @argfile argument (backslashes and quotes escaped)."""
    return path.replace("\\", "\\\\").replace('"', '\\"')
