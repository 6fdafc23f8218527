"""smallBatchRows when the user does not set it: 10000 in local mode (master
``local`` or ``local[...]``), where the driver's root is the root every reader
sees, so small batches are written by the driver; 0 on any other master. An
explicit setting, 0 included, always wins. The query's first batch logs the
value in effect and why; each batch's line says "from the driver" or "from N
tasks" (or "JVM tasks", and why tasks, when small batches are on)."""
from __future__ import annotations

import logging

import pytest

pytest.importorskip("pyspark")

from sparkjournal import JournalSink, read_table  # noqa: E402
from sparkjournal.spark.sink import LOCAL_SMALL_BATCH_ROWS, local_mode, small_batch_rows  # noqa: E402

from conftest import auto_writer  # noqa: E402

LOCAL_LINE = ("smallBatchRows=10000 (local mode: batches of at most 10000 rows are written by the "
              "driver; set smallBatchRows=0 to always use tasks)")


def events(spark, start, count, partitions=2):
    return spark.range(start, start + count, numPartitions=partitions).selectExpr(
        "id", "timestamp_seconds(id) as ts", "repeat('p', 50) as payload")


def ids_of(path):
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def sink_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "sparkjournal.sink"]


def test_small_batches_go_through_the_driver_in_local_mode(spark, tmp_path, caplog):
    assert local_mode(spark.sparkContext.master), spark.sparkContext.master
    path, checkpoint, incoming = (str(tmp_path / name) for name in ("journal", "checkpoint", "in"))
    runs = []
    for files in ((0, 1, 2), (3,)):                      # the second run: from the checkpoint
        for number in files:
            events(spark, number * 100, 100, partitions=1).write.parquet(f"{incoming}/part-{number}")
        source = (spark.readStream.schema("id long, ts timestamp, payload string")
                  .option("maxFilesPerTrigger", 1).option("recursiveFileLookup", "true")
                  .parquet(incoming))
        sink = JournalSink(path)                         # default options
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="sparkjournal.sink"):
            query = (source.writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint)
                     .trigger(availableNow=True).start())
            query.awaitTermination()
        assert query.exception() is None, query.exception()
        runs.append((sink, sink_lines(caplog)))

    ids = ids_of(path)
    assert ids == list(range(400)), "every event exactly once"
    for (sink, lines), batches in zip(runs, (3, 1)):
        assert sink.small_batch_rows == LOCAL_SMALL_BATCH_ROWS
        assert [(m.on_driver, m.rows) for m in sink.history] == [(True, 100)] * batches
        start, *per_batch = lines
        assert start.endswith(LOCAL_LINE) and f"into {path}: " in start, start
        assert sum("smallBatchRows=" in line for line in lines) == 1, "said once, at the start"
        assert len(per_batch) == batches, lines
        assert all("100 rows" in line and " records from the driver into 1 lanes;" in line
                   for line in per_batch), per_batch


def test_explicit_zero_keeps_tasks_in_local_mode(spark, tmp_path, caplog):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0)
    with caplog.at_level(logging.INFO, logger="sparkjournal.sink"):
        sink(events(spark, 0, 10), 0)
        sink(events(spark, 10, 10), 1)
    assert ids_of(path) == list(range(20))
    assert sink.small_batch_rows == 0
    assert [(m.on_driver, m.tasks) for m in sink.history] == [(False, 2), (False, 2)]
    start, *per_batch = sink_lines(caplog)
    writer, tasks = auto_writer()
    assert start.startswith(f"query q into {path}: writer={writer} (auto"), start
    assert start.endswith("; smallBatchRows=0 (as set: every batch is written by executor tasks)")
    assert len(per_batch) == 2 and all(f" records from 2 {tasks} into " in line
                                       for line in per_batch)


def test_tasks_say_why_when_small_batches_are_on(spark, tmp_path, caplog):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=5)
    with caplog.at_level(logging.INFO, logger="sparkjournal.sink"):
        sink(events(spark, 0, 10), 0)                    # over the limit: tasks
        sink(events(spark, 10, 3), 1)                    # the last one was large: tasks again
        sink(events(spark, 13, 3), 2)                    # the last one was small: the driver
    assert ids_of(path) == list(range(16))
    start, *per_batch = sink_lines(caplog)
    assert start.endswith("smallBatchRows=5 (as set: batches of at most 5 rows are written by the "
                          "driver; set smallBatchRows=0 to always use tasks)"), start
    _writer, tasks = auto_writer()
    assert f" records from 2 {tasks} (over smallBatchRows=5) into " in per_batch[0]
    assert f" records from 2 {tasks} (the last batch was over smallBatchRows=5) into " in \
        per_batch[1]
    assert " records from the driver into " in per_batch[2]


@pytest.mark.parametrize("master", ["local", "local[1]", "local[2]", "local[*]", "local[2,4]",
                                    "local[*,3]"])
def test_local_masters_default_to_small_batches_through_the_driver(master):
    assert local_mode(master)
    rows, line = small_batch_rows(None, master)
    assert (rows, line) == (10000, LOCAL_LINE)


@pytest.mark.parametrize("master", ["local-cluster[2,1,1024]", "spark://host:7077", "yarn",
                                    "k8s://https://10.0.0.1:6443", "mesos://host:5050",
                                    "localhost", "local-cluster"])
def test_cluster_master_keeps_small_batches_off(master):
    assert not local_mode(master)
    rows, line = small_batch_rows(None, master)
    assert rows == 0
    assert line == (f"smallBatchRows=0 (master {master} is not local mode: every batch is written "
                    f"by executor tasks; set smallBatchRows only where readers see the driver's "
                    f"root)")


@pytest.mark.parametrize("option, master", [(0, "local[*]"), (0, "local"), (0, "yarn"),
                                            (500, "spark://host:7077"), (500, "local[2]"),
                                            (20000, "local-cluster[2,1,1024]")])
def test_an_explicit_setting_always_wins(option, master):
    rows, line = small_batch_rows(option, master)
    assert rows == option
    assert line.startswith(f"smallBatchRows={option} (as set: ")
