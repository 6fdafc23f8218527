"""``sparkjournal.read``: every lane read on the node that holds it, the same
events as the format reader, and a task off its node failing instead of reading
another node's lane."""
from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import time

import pytest

pytest.importorskip("pyspark")

import sparkjournal  # noqa: E402
from sparkjournal import JournalSink, read_table  # noqa: E402
from sparkjournal.errors import SparkJournalError  # noqa: E402
from sparkjournal.events.node import NODE_ID_FILE  # noqa: E402
from sparkjournal.spark.lane_plan import UnreachableNodesError  # noqa: E402
from sparkjournal.spark.placement import Executor, lane_locations  # noqa: E402

CHILD = os.path.join(os.path.dirname(__file__), "spark_child.py")


def frame(spark, start, count):
    return spark.range(start, start + count, numPartitions=3).selectExpr(
        "id", "cast(id as string) as key")


def test_locality_read_returns_exactly_what_the_format_reader_returns(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0)    # tasks: several lanes to place
    sink(frame(spark, 0, 600), 0)
    sink(frame(spark, 600, 300).selectExpr("*", "if(id >= 0, 'late', null) as note"), 1)
    local = sparkjournal.read(spark, path)
    by_format = spark.read.format("sparkjournal").load(path)
    assert local.schema == by_format.schema
    assert local.rdd.getNumPartitions() == len([d for d in os.listdir(path) if d.startswith("lane-")])
    rows = sorted(tuple(r) for r in local.collect())
    assert rows == sorted(tuple(r) for r in by_format.collect())
    assert [r[0] for r in rows] == list(range(900))
    assert {r[2] for r in rows} == {None, "late"}


@pytest.mark.slow
def test_local_cluster_reads_each_lane_on_the_executor_whose_root_holds_it(tmp_path):
    result = subprocess.run([sys.executable, CHILD, "locality", "--data", str(tmp_path)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    read = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("{")))
    owner, lanes = {}, 0                    # event id -> executor whose root holds it, on disk
    for root in glob.glob(str(tmp_path / "node-*")):
        table = read_table(root)
        if table is not None:
            lanes += len([d for d in os.listdir(root) if d.startswith("lane-")])
            owner.update(dict.fromkeys(table.column("id").to_pylist(), root.rsplit("node-", 1)[1]))
    assert set(owner.values()) == {"0", "1"}, f"both executors' roots hold events: {owner.values()}"
    assert read["partitions"] == lanes
    for rows in read["reads"]:
        assert sorted(event for event, _reader in rows) == list(range(4000)), "each event once"
        strays = [(event, reader, owner[event]) for event, reader in rows if reader != owner[event]]
        assert not strays, f"(event, reading executor, holding executor) read off-node: {strays[:5]}"


def failed_attempts(sc, group: str) -> int:
    """Failed task attempts of the job group's failed job, from the status
    tracker (fed by the listener bus, so it may lag the job's end a little)."""
    tracker = sc.statusTracker()
    for _ in range(100):
        jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group)]
        if jobs and all(job.status == "FAILED" for job in jobs):
            return sum(tracker.getStageInfo(s).numFailedTasks for job in jobs for s in job.stageIds
                       if tracker.getStageInfo(s) is not None)
        time.sleep(0.1)
    raise AssertionError(f"the status tracker never showed job group {group} failed")


def test_task_on_a_node_with_another_node_id_fails_naming_lane_and_hosts(spark, tmp_path):
    path = str(tmp_path / "journal")
    JournalSink(path, txnAppId="q")(frame(spark, 0, 30), 0)
    with open(os.path.join(path, NODE_ID_FILE)) as handle:
        planned = handle.read().strip()
    local = sparkjournal.read(spark, path)                     # planned for node `planned`
    with open(os.path.join(path, NODE_ID_FILE), "w") as handle:
        handle.write("0123456789abcdef@elsewhere\n")             # the same path, another node
    spark.sparkContext.setJobGroup("wrong-node", "a read whose root changed node")
    try:
        with pytest.raises(Exception) as failure:
            local.collect()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    message = str(failure.value)
    assert "WrongNodeError" in message
    assert re.search(rf"lane {path}/lane-\d+ is held by node {planned} \(host {planned.split('@')[1]}\)",
                     message)
    assert "has NODE_ID 0123456789abcdef@elsewhere" in message
    assert "spark.locality.wait" in message
    assert failed_attempts(spark.sparkContext, "wrong-node") >= 4, "Spark retried the task"


def test_committed_lanes_no_host_offers_fail_the_read_naming_node_lanes_and_batches(
        spark, tmp_path, caplog):
    log = str(tmp_path / "commits")
    sink = JournalSink(str(tmp_path / "elsewhere"), txnAppId="q", commitLog=log)
    sink(frame(spark, 0, 3), 0)
    sink(frame(spark, 3, 3), 1)
    node = open(tmp_path / "elsewhere" / NODE_ID_FILE).read().strip()
    (tmp_path / "here").mkdir()
    with pytest.raises(UnreachableNodesError) as failure:
        sparkjournal.read(spark, str(tmp_path / "here"), commitLog=log)
    message = str(failure.value)
    assert f"node {node} on host {node.split('@')[1]} (host {node.split('@')[1]} is live but has " \
           f"no node root at {tmp_path / 'elsewhere'})" in message
    assert re.search(r"lanes lane-\d+(, lane-\d+)*, holding 2 committed batches", message)
    assert "allowPartialRead=true" in message
    with caplog.at_level("WARNING", logger="sparkjournal.plan"):
        partial = sparkjournal.read(spark, str(tmp_path / "here"), commitLog=log,
                                    allowPartialRead="true")
        assert partial.count() == 0
    assert any(f"PARTIAL READ of {tmp_path / 'here'}: left out node {node}" in r.getMessage()
               for r in caplog.records)


def test_root_without_node_id_is_refused_before_any_task(spark, tmp_path):
    path = str(tmp_path / "journal")
    JournalSink(path, txnAppId="q")(frame(spark, 0, 3), 0)
    os.unlink(os.path.join(path, NODE_ID_FILE))
    with pytest.raises(SparkJournalError, match=rf"node root\(s\) {path} on host \S+ have no NODE_ID file"):
        sparkjournal.read(spark, path)


def test_root_executor_is_preferred_only_among_the_executors_that_hold_its_node():
    # Executor ids restart with every application: root node-1 was named by an
    # earlier application's executor 1; this one's executor 1 does not hold it.
    e0, e1 = Executor("0", "10.0.0.5"), Executor("1", "10.0.0.6")
    template = "/j/node-{executor}"
    assert lane_locations(template, "/j/node-0", [e0, e1]) == ["executor_10.0.0.5_0"]
    assert lane_locations(template, "/j/node-1", [e0]) == ["10.0.0.5"]
    assert lane_locations("/j/{host}", "/j/a", [e1, e0]) == ["10.0.0.5", "10.0.0.6"]
    assert lane_locations(template, "/j/node-1", []) == []
