"""Shared fixtures for the sparkjournal test suite (fixtures only; helpers that
one test file needs live in that file).

Journal fixtures use small files (64k data files, 16k write buffer, 2 minimum
files) so that rolls, reclaim and file reuse happen after a few hundred records.
"""
from __future__ import annotations

import pytest

try:
    import sparkjournal._sjnative  # noqa: F401  (the C core: codec + kernel AIO writer)
    NATIVE_BUILT = True
    NATIVE_MISSING_REASON = ""
except ImportError as _error:  # pragma: no cover - depends on the build
    NATIVE_BUILT = False
    NATIVE_MISSING_REASON = (f"the C core sparkjournal._sjnative is not built ({_error}); "
                             f"journalType=ASYNCIO needs it -- run "
                             f"`pip install -e . --no-build-isolation` with a C compiler")

BACKENDS = ("ASYNCIO", "NIO")


def pytest_sessionstart(session):
    """An earlier sparkjournal's jar in pyspark's jars/ would be every session's
    connector, not the one under test: refuse to run, saying how to remove it."""
    try:
        from sparkjournal.spark import old_placement
        left = old_placement.placed()
    except ImportError:                     # no pyspark: the Spark tests skip themselves
        return
    if left:
        raise pytest.UsageError(f"an earlier sparkjournal placed {', '.join(left)} in "
                                f"{old_placement.jars_folder()}: every Spark session of that "
                                f"pyspark would load it instead of the connector under test; "
                                f"run `python -m sparkjournal jvm --remove` first")


def pytest_configure(config):
    # pyproject.toml registers `slow`; register it here too if it does not (so a
    # run with --strict-markers never fails on it).
    registered = [line.split(":", 1)[0].strip() for line in config.getini("markers")]
    if "slow" not in registered:
        config.addinivalue_line("markers", "slow: long-running tests (deselect with -m 'not slow')")


@pytest.fixture
def lane(tmp_path):
    """Path (str) of a journal lane folder that does not exist yet."""
    return str(tmp_path / "lane")


@pytest.fixture
def small_options():
    """Options that make a journal roll files after a few hundred small records."""
    return {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


@pytest.fixture(params=BACKENDS)
def backend(request):
    """The journalType under test; ASYNCIO is skipped when the C core is missing."""
    if request.param == "ASYNCIO" and not NATIVE_BUILT:
        pytest.skip(NATIVE_MISSING_REASON)
    return request.param


@pytest.fixture
def options(small_options, backend):
    """small_options plus journalType=<backend>."""
    return {**small_options, "journalType": backend}


# Spark settings every test session and test child process uses: no UI, two
# shuffle partitions, and the checkpoint file manager that does not spawn a
# process per file (spark-integration.md: ~33 ms -> ~9 ms per checkpoint write).
SPARK_TEST_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.streaming.checkpointFileManagerClass":
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
}


@pytest.fixture(scope="session")
def spark():
    """One real local SparkSession for the whole test session. ``local[2,4]``:
    two cores, and a failed task is retried (up to 4 attempts) as on a cluster.
    Started as a user starts one: ``sparkjournal.configure(builder)`` gives it
    the JVM connector (where a JDK can build the jar)."""
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession
    import sparkjournal
    builder = SparkSession.builder.master("local[2,4]").appName("sparkjournal-tests")
    for key, value in SPARK_TEST_CONF.items():
        builder = builder.config(key, value)
    session = sparkjournal.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def wait_lanes_free():
    """A function that waits (up to a minute) until no process holds each given
    lane: Spark workers release a lane writer after laneIdleTimeout."""
    import time
    from sparkjournal.journal.lock import LaneLock

    def wait(lanes, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        for lane in lanes:
            lock = LaneLock(lane)
            while not lock.try_acquire():
                assert time.monotonic() < deadline, f"{lane} stayed held"
                time.sleep(0.05)
            lock.release()
    return wait


def auto_writer() -> tuple[str, str]:
    """(the writer JournalSink's default "auto" takes here, what a batch's log line calls
    its tasks): ("jvm", "JVM tasks") where the JVM connector's jar can be had (sessions
    then take it: spark/connector.py), else ("python", "tasks")."""
    from sparkjournal.spark import connector
    return ("jvm", "JVM tasks") if connector.jar_unavailable() is None else ("python", "tasks")
