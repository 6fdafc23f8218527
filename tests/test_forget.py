"""A node gone for good: `sparkjournal nodes --forget` after its root is lost.
Two node roots share one commit log (as two hosts of a cluster do); reads fail
while a root holding committed events is missing, succeed after the node is
forgotten with the loss reported exactly, leave the root out (quarantined)
when it comes back, and read it again after --restore. Writers refuse a
forgotten root. Real lanes, the sink's own task writer and committer, real
Spark reads (the data source and sparkjournal.read)."""
from __future__ import annotations

import json
import logging
import os
import shutil

import pyarrow as pa
import pytest

import sparkjournal
from sparkjournal.cli.main import main
from sparkjournal.events.node import read_node_id
from sparkjournal.spark.committer import BatchCommitter, BatchMetrics
from sparkjournal.spark.lane_cache import drop_writer
from sparkjournal.spark.lane_writer import SinkTaskError, WritePlan, write_task

ROWS = 10


def land(base: str, node: str, batch: int) -> None:
    """Batch ``batch`` of query "q", written into root ``node`` under ``base``."""
    root, log_uri = os.path.join(base, node), os.path.join(base, "_commits")
    committer = BatchCommitter(root, {}, log_uri)
    events = pa.table({"id": pa.array(range(batch * ROWS, (batch + 1) * ROWS), pa.int64())})
    committer.check_schema(events.schema, f"batch {batch}")
    plan = WritePlan(root, (), log_uri, "q", batch, committer.log.log_id(create=True))
    message = write_task(iter(events.to_batches()), plan)
    committer.commit("q", batch, [message], BatchMetrics("q", batch))
    drop_writer(root, ())


def read_ids(spark, base: str) -> list[int]:
    frame = spark.read.format("sparkjournal").option("commitLog", os.path.join(base, "_commits")) \
        .load(os.path.join(base, "node-{executor}"))
    return sorted(r.id for r in frame.select("id").collect())


def located_ids(spark, base: str) -> list[int]:
    frame = sparkjournal.read(spark, os.path.join(base, "node-{executor}"),
                              commitLog=os.path.join(base, "_commits"))
    return sorted(r.id for r in frame.select("id").collect())


def nodes(base: str, capsys, *extra) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["nodes", os.path.join(base, "node-{executor}"), "--commit-log",
                 os.path.join(base, "_commits"), *extra])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_a_lost_node_forgotten_then_back_then_restored(spark, tmp_path, capsys, caplog):
    base = str(tmp_path)
    for batch in range(4):
        land(base, "node-a" if batch % 2 == 0 else "node-b", batch)
    lost = read_node_id(os.path.join(base, "node-b"))
    assert read_ids(spark, base) == list(range(4 * ROWS))
    shutil.move(os.path.join(base, "node-b"), os.path.join(base, "away"))       # the disk is lost
    with pytest.raises(Exception, match=lost.split("@")[0]):
        read_ids(spark, base)
    code, listed = nodes(base, capsys, "--json")
    entry = next(n for n in json.loads(listed)["nodes"] if n["node"] == lost)
    assert (entry["batches"], entry["events"]) == (2, 2 * ROWS) and entry["bytes"] > 0
    code, said = nodes(base, capsys, "--forget", lost, "--yes")
    assert code == 0 and f"{2 * ROWS} events" in said and "loses 2 committed" in said
    with caplog.at_level(logging.WARNING, logger="sparkjournal.read"):
        assert read_ids(spark, base) == [i for b in (0, 2) for i in range(b * ROWS, (b + 1) * ROWS)]
        assert located_ids(spark, base) == read_ids(spark, base)
    assert f"{2 * ROWS} committed events of 1 forgotten node(s) ({lost})" in caplog.text
    # The host comes back with that root: its lanes stay out until restored.
    shutil.move(os.path.join(base, "away"), os.path.join(base, "node-b"))
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sparkjournal.read"):
        assert len(read_ids(spark, base)) == 2 * ROWS          # the JVM reader logs in the JVM
        assert len(located_ids(spark, base)) == 2 * ROWS
    assert "quarantined" in caplog.text and lost in caplog.text
    with pytest.raises(SinkTaskError, match="forgot"):
        land(base, "node-b", 4)
    code, said = nodes(base, capsys)
    assert "FORGOTTEN" in said
    code, said = nodes(base, capsys, "--restore", lost, "--yes")
    assert code == 0 and "restored" in said
    assert read_ids(spark, base) == list(range(4 * ROWS))
    assert located_ids(spark, base) == list(range(4 * ROWS))


def test_forget_refuses_an_unknown_node_and_asks_for_yes(tmp_path, capsys):
    base = str(tmp_path)
    land(base, "node-a", 0)
    node = read_node_id(os.path.join(base, "node-a"))
    code, said = nodes(base, capsys, "--forget", "nobody@nowhere", "--yes")
    assert code == 2 and "names no node 'nobody@nowhere'" in said
    code, said = nodes(base, capsys, "--forget", node)
    assert code == 2 and "--yes" in said
    code, said = nodes(base, capsys, "--restore", node, "--yes")
    assert code == 1 and "is not forgotten" in said
