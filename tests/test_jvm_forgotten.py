"""Forgotten nodes as the JVM connector meets them (format/COMMIT_LOG.md,
"Forgotten nodes"): ``spark.read.format("sparkjournal")`` leaves a forgotten
node's lanes out, logs the forgotten events and a root of it found live
(quarantined) on its own logger (java.util.logging "sparkjournal.read",
captured here through py4j), and reports the forgotten events as the scan's
``forgottenEvents`` metric; ``spark.readStream.format("sparkjournal")``
reports ``forgottenEvents``, ``heldBackRows`` and ``oldestUndecidedAgeMs`` in
each trigger's progress (``sources[0].metrics``)."""
from __future__ import annotations

import contextlib
import os

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from sparkjournal.cli.main import main  # noqa: E402
from sparkjournal.events.node import read_node_id  # noqa: E402
from sparkjournal.spark import connector  # noqa: E402
from sparkjournal.spark.committer import BatchCommitter, BatchMetrics  # noqa: E402
from sparkjournal.spark.lane_cache import drop_writer  # noqa: E402
from sparkjournal.spark.lane_writer import WritePlan, write_task  # noqa: E402

ROWS = 10


@pytest.fixture
def jvm(spark):
    reason = connector.jar_unavailable()
    if reason:
        pytest.skip(f"the JVM connector cannot be built: {reason}")
    return spark


def prepare(base: str, node: str, query: str, batch: int):
    """Batch ``batch`` of ``query`` written into root ``node`` and prepared, not decided."""
    root, log_uri = os.path.join(base, node), os.path.join(base, "_commits")
    committer = BatchCommitter(root, {}, log_uri)
    events = pa.table({"id": pa.array(range(batch * ROWS, (batch + 1) * ROWS), pa.int64())})
    committer.check_schema(events.schema, f"batch {batch}")
    plan = WritePlan(root, (), log_uri, query, batch, committer.log.log_id(create=True))
    return committer, write_task(iter(events.to_batches()), plan)


def land(base: str, node: str, batch: int, query: str = "q") -> None:
    committer, message = prepare(base, node, query, batch)
    committer.commit(query, batch, [message], BatchMetrics(query, batch))
    drop_writer(os.path.join(base, node), ())


def forget(base: str, node: str) -> None:
    assert main(["nodes", os.path.join(base, "node-{executor}"), "--commit-log",
                 os.path.join(base, "_commits"), "--forget", node, "--yes"]) == 0


def reader(spark, base: str):
    return spark.read.format("sparkjournal").option("commitLog", os.path.join(base, "_commits")) \
        .option("missingHostWait", "1s").load(os.path.join(base, "node-{executor}"))


@contextlib.contextmanager
def jvm_log(spark, name: str = "sparkjournal.read"):
    """The WARNINGs the JVM logs on ``name`` meanwhile, as text (a list of one string)."""
    jul = spark._jvm.java.util.logging
    logger = jul.Logger.getLogger(name)
    out = spark._jvm.java.io.ByteArrayOutputStream()
    handler = jul.StreamHandler(out, jul.SimpleFormatter())
    handler.setLevel(jul.Level.WARNING)
    logger.addHandler(handler)
    found = [""]
    try:
        yield found
    finally:
        handler.flush()
        logger.removeHandler(handler)
        found[0] = out.toString("UTF-8")


def scan_metric(frame, name: str) -> int:
    """The value of the sparkjournal scan's metric ``name`` after the frame ran."""
    leaves = frame._jdf.queryExecution().executedPlan().collectLeaves()
    scans = [leaves.apply(i) for i in range(leaves.size())
             if leaves.apply(i).nodeName().startswith("BatchScan")]
    assert len(scans) == 1, [leaves.apply(i).nodeName() for i in range(leaves.size())]
    return int(scans[0].metrics().apply(name).value())


def test_the_jvm_read_leaves_a_forgotten_node_out_and_says_so(jvm, tmp_path):
    base = str(tmp_path)
    for batch in range(4):
        land(base, "node-a" if batch % 2 == 0 else "node-b", batch)
    lost = read_node_id(os.path.join(base, "node-b"))
    frame = reader(jvm, base).select("id")
    assert sorted(r.id for r in frame.collect()) == list(range(4 * ROWS))
    assert scan_metric(frame, "forgottenEvents") == 0
    forget(base, lost)
    # The root is still there: its lanes are quarantined, not read.
    with jvm_log(jvm) as said:
        frame = reader(jvm, base).select("id")
        ids = sorted(r.id for r in frame.collect())
    assert ids == [i for b in (0, 2) for i in range(b * ROWS, (b + 1) * ROWS)]
    assert scan_metric(frame, "forgottenEvents") == 2 * ROWS
    assert f"{2 * ROWS} committed events of 1 forgotten node(s) ({lost}) are not read" in said[0]
    assert f"node {lost} is forgotten" in said[0] and "(quarantined)" in said[0]
    assert f"--restore {lost}`" in said[0]
    assert main(["nodes", os.path.join(base, "node-{executor}"), "--commit-log",
                 os.path.join(base, "_commits"), "--restore", lost, "--yes"]) == 0
    with jvm_log(jvm) as said:
        frame = reader(jvm, base)
        assert len(frame.collect()) == 4 * ROWS
    assert scan_metric(frame, "forgottenEvents") == 0
    assert "forgotten" not in said[0]


def test_the_jvm_stream_reports_forgotten_and_held_back_events(jvm, tmp_path):
    base = str(tmp_path)
    land(base, "node-b", 0)
    forget(base, read_node_id(os.path.join(base, "node-b")))
    # On node-a, an undecided transaction (query u) ahead of a committed one (query q).
    prepare(base, "node-a", "u", 0)
    land(base, "node-a", 1)
    query = (jvm.readStream.format("sparkjournal").option("commitLog", os.path.join(base, "_commits"))
             .option("missingHostWait", "1s").load(os.path.join(base, "node-{executor}"))
             .select("id").writeStream.format("memory").queryName("forgotten_stream")
             .option("checkpointLocation", os.path.join(base, "checkpoint"))
             .trigger(availableNow=True).start())
    query.awaitTermination(180)
    assert query.exception() is None, query.exception()
    metrics = query.lastProgress["sources"][0]["metrics"]
    assert metrics["forgottenEvents"] == str(ROWS)
    assert metrics["heldBackRows"] == str(ROWS)
    assert int(metrics["oldestUndecidedAgeMs"]) > 0
    assert jvm.sql("select * from forgotten_stream").count() == 0      # all of it held back
