"""The foreachBatch sink with its tasks writing in the JVM (``JournalSink(path,
writer="jvm")``, spark/jvm_sink.py over io.sparkjournal.spark.JvmSinkWrite), on
real local Spark and real files, against the Python writer it stands in for:

* a streaming query lands every event exactly once, as both readers see it,
  and the sink's metrics and log lines say JVM tasks wrote it; a batch run
  again after its decision writes nothing (the sink skips it, and JVM tasks
  given a decided batch write nothing either);
* the same rows written by either writer read back equal, values and schema
  (timestamps, nulls, strings, a struct, an array);
* a column the JVM cannot convert fails the batch on the driver, naming
  its type, before any job or lane file; every journal option keeps auto's
  JVM tasks;
* a task failing after its appends or after its PREPARE (first attempt) is
  retried and the batch lands exactly once;
* the connector missing from the session, and writer=jvm given to the
  format("sparkjournal") writer, fail saying what to do.
The driver-kill harness with this writer is in test_sink_crash.py.
"""
from __future__ import annotations

import logging
import os
import time

import pytest

pytest.importorskip("pyspark")

import sparkjournal  # noqa: E402
from sparkjournal import JournalSink, read_table  # noqa: E402
from sparkjournal.events.requests import pending  # noqa: E402
from sparkjournal.journal.lock import LaneLock  # noqa: E402
from sparkjournal.events.commit_log import CommitLog  # noqa: E402
from sparkjournal.events.visible_events import lanes_of  # noqa: E402
from sparkjournal.spark import jvm_build, jvm_sink  # noqa: E402
from sparkjournal.spark.jvm_sink import JvmSinkError, jvm_write  # noqa: E402
from sparkjournal.spark.lane_writer import INJECT_FAILURE, WritePlan  # noqa: E402

from test_sink import prepared_in_lanes  # noqa: E402
from sparkjournal.events.resolve import Outcome  # noqa: E402

COLUMNS = ("id", "timestamp_seconds(id) as ts", "if(id % 3 = 0, null, concat('k', id)) as key",
           "named_struct('n', id * 2, 's', if(id % 5 = 0, null, 'v')) as nested",
           "array(id, id + 1) as pair", "repeat('p', 100) as payload",
           "if(id % 7 = 0, null, cast(id * 1.5 as double)) as amount")


@pytest.fixture(scope="module")
def jvm_spark(spark):
    """The shared session, with the connector's JvmSinkWrite on its classpath."""
    if jvm_sink._writer_in(spark._jvm) is None:
        pytest.skip(f"no JvmSinkWrite on the SparkSession's classpath: "
                    f"{jvm_build.jvm_unavailable()}")
    return spark


@pytest.fixture
def inject(spark):
    context = spark.sparkContext
    yield lambda value: context.setLocalProperty(INJECT_FAILURE, value)
    context.setLocalProperty(INJECT_FAILURE, None)


def events(spark, start, count, partitions=2):
    return spark.range(start, start + count, numPartitions=partitions).selectExpr(*COLUMNS)


def ids_of(path):
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def test_stream_written_by_jvm_tasks_lands_each_event_once_and_says_so(jvm_spark, tmp_path,
                                                                       caplog):
    spark = jvm_spark
    source, path = str(tmp_path / "source"), str(tmp_path / "journal")
    for part in range(3):                                    # one micro-batch per file
        events(spark, part * 1500, 1500).write.parquet(os.path.join(source, f"part={part}"))
    stream = (spark.readStream.schema(events(spark, 0, 1).schema).option("maxFilesPerTrigger", 2)
              .parquet(os.path.join(source, "*")))
    sink = JournalSink(path, txnAppId="q", writer="jvm", smallBatchRows=0)
    with caplog.at_level(logging.INFO, logger="sparkjournal.sink"):
        query = (stream.writeStream.foreachBatch(sink).trigger(availableNow=True)
                 .option("checkpointLocation", str(tmp_path / "checkpoint")).start())
        query.awaitTermination(120)
    assert query.exception() is None
    assert len(sink.history) >= 2 and all(m.jvm and m.tasks >= 1 for m in sink.history)
    assert sum(m.rows for m in sink.history) == 4500
    lines = [r.getMessage() for r in caplog.records if r.name == "sparkjournal.sink"]
    assert "writer=jvm (as set: executor tasks write in the JVM" in lines[0], lines[0]
    assert all(" JVM tasks into " in line for line in lines[1:]), lines

    assert ids_of(path) == list(range(4500))
    read = spark.read.format("sparkjournal").load(path)
    assert sorted(row.id for row in read.select("id").collect()) == list(range(4500))

    # Run again after its decision: the sink skips it, and JVM tasks given the decided
    # batch directly write nothing and return no message.
    lanes = {lane: sorted(os.listdir(lane)) for lane in lanes_of(path)}
    sink(events(spark, 0, 1500), 0)
    assert sink.history[-1].skipped
    plan = WritePlan(path, sink.journal_options, sink.committer.log_uri, "q", 0,
                     sink.committer.log.log_id())
    assert jvm_write(events(spark, 0, 1500), plan, sink.committer.config) == []
    assert {lane: sorted(os.listdir(lane)) for lane in lanes_of(path)} == lanes
    assert ids_of(path) == list(range(4500))


def test_jvm_and_python_writers_read_back_equal_values_and_schema(jvm_spark, tmp_path):
    spark = jvm_spark
    frame = events(spark, 0, 3000, partitions=3)
    tables = {}
    for writer in ("jvm", "python"):
        path = str(tmp_path / writer)
        # 64k files: pieces of a few hundred rows, several records per task
        JournalSink(path, txnAppId="q", writer=writer, smallBatchRows=0, fileSize="64k",
                    bufferSize="16k")(frame, 0)
        tables[writer] = read_table(path).sort_by("id")
        spark_rows = spark.read.format("sparkjournal").load(path).select(
            "id", "ts", "key", "nested", "pair", "amount").orderBy("id").collect()
        tables[writer + " spark"] = [row.asDict(recursive=True) for row in spark_rows]
    jvm, python = tables["jvm"], tables["python"]
    assert jvm.schema.remove_metadata() == python.schema.remove_metadata()
    assert jvm.num_rows == 3000 and jvm.to_pylist() == python.to_pylist()
    assert tables["jvm spark"] == tables["python spark"]
    assert jvm.column("key").null_count == 1000 and jvm.column("amount").null_count == 429


def test_a_column_the_jvm_cannot_convert_fails_the_batch_on_driver_before_any_job(jvm_spark,
                                                                                   tmp_path):
    spark = jvm_spark
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", writer="jvm", smallBatchRows=0)
    context = spark.sparkContext
    context.setJobGroup("refused-jvm-option", "a refused column runs no job")
    try:
        with pytest.raises(Exception) as caught:     # the schema's Arrow conversion refuses it
            sink(events(spark, 0, 100).selectExpr("*", "make_ym_interval(1, 2) as span"), 0)
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
    message = str(caught.value)
    assert "UNSUPPORTED_DATA_TYPE_FOR_ARROW_CONVERSION" in message, message
    assert "YearMonthIntervalType" in message, message
    assert context.statusTracker().getJobIdsForGroup("refused-jvm-option") == []
    assert lanes_of(path) == [] and CommitLog(os.path.join(path, "_commits")).batches("q") == []


@pytest.mark.parametrize("point", ["afterWrite:1", "afterPrepare:0"])
def test_task_failing_on_first_attempt_is_retried_and_batch_lands_once(jvm_spark, tmp_path,
                                                                       inject, point):
    spark = jvm_spark
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", writer="jvm", smallBatchRows=0)
    inject(point)
    sink(events(spark, 0, 1000), 0)
    inject(None)
    assert ids_of(path) == list(range(1000))
    assert sink.history[0].tasks == 2 and sink.history[0].rows == 1000
    decision = CommitLog(os.path.join(path, "_commits")).decision("q", 0)
    assert len(decision.txs) == 2 and decision.rows == 1000
    left = prepared_in_lanes(path)
    assert {fate for _xid, fate in left} <= {Outcome.COMMITTED, Outcome.ABORTED}
    assert [(x.partition, x.attempt) for x, fate in left if fate is Outcome.ABORTED] in (
        [], [(0, 0)]), "only the failed attempt may be aborted (where a writer still holds it)"
    sink(events(spark, 1000, 10), 1)
    assert ids_of(path) == list(range(1010))
    # Batch 1's two tasks took the (at most two) writers kept for batch 0's lanes, oldest first,
    # so each kept lane was touched even if the tasks ran one after the other; a lane not kept
    # was free for the driver. Batch 0's PREPAREs are ended; only batch 1's wait for a writer.
    assert [(x.batch, fate) for x, fate in prepared_in_lanes(path)
            if x.batch != 1 or fate is not Outcome.COMMITTED] == []


class SessionWithoutJvm:                      # as a Spark Connect session: no py4j gateway
    @property
    def _jvm(self):
        raise RuntimeError("no gateway")


class Frame:
    sparkSession = SessionWithoutJvm()


def test_jvm_writer_without_the_connector_names_what_is_needed():
    with pytest.raises(JvmSinkError, match=r"needs sparkjournal's JVM connector .* or use "
                                           r"writer='python'"):
        jvm_sink.jvm_writer(Frame())


def test_auto_writer_keeps_jvm_tasks_for_every_journal_option_and_says_so(jvm_spark, tmp_path,
                                                                          caplog):
    spark = jvm_spark
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0, maxSizeBytes="1g",
                       maxRootSizeBytes="2g", addressFullPolicy="BLOCK", largeRecordSize="64k")
    with caplog.at_level(logging.INFO, logger="sparkjournal.sink"):
        sink(events(spark, 0, 100), 0)
    assert ids_of(path) == list(range(100))
    assert [(m.jvm, m.tasks) for m in sink.history] == [(True, 2)]
    start = [r.getMessage() for r in caplog.records if r.name == "sparkjournal.sink"][0]
    assert "writer=jvm (auto: executor tasks write in the JVM" in start, start


def test_auto_writer_without_the_connector_takes_python_workers_naming_what_is_missing():
    jvm, line = jvm_sink.writer_choice(Frame(), "AUTO", None)
    assert not jvm and line.startswith("writer=python (auto: JournalSink writer='jvm' needs "
                                       "sparkjournal's JVM connector"), line
    assert jvm_sink.writer_choice(Frame(), "PYTHON", None) == (
        False, "writer=python (as set: executor tasks write in Python workers)")
    with pytest.raises(JvmSinkError, match="needs sparkjournal's JVM connector"):
        jvm_sink.writer_choice(Frame(), "JVM", None)


def test_format_writer_with_writer_jvm_is_the_connectors_own_write(jvm_spark, tmp_path):
    path = str(tmp_path / "journal")
    jvm_spark.range(3).write.format("sparkjournal").option("writer", "jvm").mode("append") \
        .save(path)
    assert ids_of(path) == [0, 1, 2]          # tests/test_jvm_write.py: the JVM write itself


def test_jvm_tasks_keep_their_lanes_across_batches_and_give_them_up_to_requests_or_idleness(
        jvm_spark, tmp_path):
    spark = jvm_spark
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", writer="jvm", smallBatchRows=0, laneIdleTimeout="10s")
    sink(events(spark, 0, 500, partitions=1), 0)
    held = os.path.join(path, "lane-000")
    assert lanes_of(path) == [held]
    assert not LaneLock(held).try_acquire(), "the task's writer keeps its lane for the next task"
    report = sparkjournal.delete(spark, path, "id < 10")       # the lane is busy: a request
    assert report.rows == 10 and report.pending_lanes == [held] and pending(held)
    sink(events(spark, 500, 500, partitions=1), 1)
    # the next task found the request, gave the lane up to maintenance and wrote elsewhere
    assert sorted(lanes_of(path)) == [held, os.path.join(path, "lane-001")]
    free = LaneLock(held)
    assert free.try_acquire(), "a lane with a request waiting stays held by the JVM"
    free.release()
    assert ids_of(path) == list(range(10, 1000))
    deadline = time.monotonic() + 40
    idle = LaneLock(os.path.join(path, "lane-001"))
    while not idle.try_acquire():                    # laneIdleTimeout: released by the reaper
        assert time.monotonic() < deadline, "an idle writer kept its lane past laneIdleTimeout"
        time.sleep(0.2)
    idle.release()
