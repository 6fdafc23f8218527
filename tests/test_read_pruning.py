"""Pushdown and pruning on the batch read: results with pruning equal results
without it, pruned records are never opened, and the read options that start
a read later are honoured and validated."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("pyspark")

from sparkjournal import JournalSink  # noqa: E402
from sparkjournal.events.lane_scan import LaneSlice, scan  # noqa: E402
from sparkjournal.events.pruning import Comparison, Predicate  # noqa: E402
from sparkjournal.events.resolve import commit_log  # noqa: E402
from sparkjournal.events.visible_events import node_lanes  # noqa: E402
from sparkjournal.spark.connector import reads_through_jvm  # noqa: E402

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
FILTERS = ["_batch_id = 1", "_batch_id >= 2 and id < 350", "_batch_id in (0, 3)", "id < 50",
           "key = '399'", "ts < timestamp'1970-01-01 00:01:00'", "v > 0.5",
           "_commit_time > timestamp'2020-01-01'", "_record_id > 2 or id = 7"]


def events(spark, start, count):
    return spark.range(start, start + count, numPartitions=2).selectExpr(
        "id", "cast(id as string) as key", "timestamp_seconds(id) as ts", "id / 400.0 as v")


@pytest.fixture(scope="module")
def journal(spark, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("pruning") / "journal")
    sink = JournalSink(path, txnAppId="q")
    for batch in range(4):
        sink(events(spark, batch * 100, 100), batch)
    return path


def ids(spark, path, condition, pushdown: bool):
    spark.conf.set(PUSHDOWN, str(pushdown).lower())
    try:
        frame = spark.read.format("sparkjournal").load(path).filter(condition)
        return sorted(row.id for row in frame.collect()), frame
    finally:
        spark.conf.unset(PUSHDOWN)


@pytest.mark.parametrize("condition", FILTERS)
def test_pushdown_results_equal_unfiltered_scan(spark, journal, condition):
    pushed, _frame = ids(spark, journal, condition, pushdown=True)
    plain, _frame = ids(spark, journal, condition, pushdown=False)
    assert pushed == plain


def test_batch_id_filter_is_pushed_to_the_reader(spark, journal):
    rows, frame = ids(spark, journal, "_batch_id = 1 and id > 150", pushdown=True)
    spark.conf.set(PUSHDOWN, "true")
    try:
        plan = frame._jdf.queryExecution().executedPlan().toString()
    finally:
        spark.conf.unset(PUSHDOWN)
    assert rows == list(range(151, 200))
    if reads_through_jvm(frame):
        # The JVM reader prunes records by both and hands every filter back to
        # Spark (a page's rows span batches, so only Spark filters them exactly).
        assert "pruning on 2 filter(s)" in plan
    else:
        assert "_batch_id" in plan and "= 1)" not in plan  # pushed and claimed: Spark does not re-filter
    assert "id#" in plan and "> 150" in plan               # an event column filter stays with Spark


def test_the_python_reader_claims_filters_only_when_spark_pushes_them(spark, journal):
    # The Python data source itself (where the JVM connector is installed it
    # answers format("sparkjournal")): with pushdown off it plans without
    # pushFilters and Spark filters; with it on the filter is pushed and claimed.
    from sparkjournal.spark.datasource import JournalDataSource

    class PythonOnly(JournalDataSource):
        @classmethod
        def name(cls) -> str:
            return "sparkjournal_python_only"

    spark.dataSource.register(PythonOnly)
    for pushdown in (False, True):
        spark.conf.set(PUSHDOWN, str(pushdown).lower())
        try:
            frame = (spark.read.format("sparkjournal_python_only").load(journal)
                     .filter("_batch_id = 1 and id > 150"))
            rows = sorted(row.id for row in frame.collect())
            plan = frame._jdf.queryExecution().executedPlan().toString()
        finally:
            spark.conf.unset(PUSHDOWN)
        assert rows == list(range(151, 200)), pushdown
        assert ("= 1)" in plan) is not pushdown, plan   # claimed by the reader only when pushed


def test_pruned_records_are_not_read(spark, journal):
    log_uri = os.path.join(journal, "_commits")
    schema = commit_log(log_uri).read_schema()
    everything, pruned = 0, 0
    for lane, node in node_lanes(journal):
        everything += len(list(scan(LaneSlice(lane, node, log_uri), schema, {})))
        batches = list(scan(LaneSlice(lane, node, log_uri, predicate=Predicate(
            (Comparison("id", "<", 50), Comparison("_batch_id", ">=", 0)))), schema, {}))
        pruned += len(batches)
        assert all(batch.column("id").to_pylist()[0] < 100 for batch in batches)
    assert everything >= 8 and 1 <= pruned <= 2          # only batch 0's records can hold id < 50


def test_starting_batch_id_option_reads_from_that_batch(spark, journal):
    frame = spark.read.format("sparkjournal").option("startingBatchId", 2).load(journal)
    assert sorted(row.id for row in frame.collect()) == list(range(200, 400))


def test_bad_read_option_names_the_option(spark, journal):
    with pytest.raises(Exception, match="startingBatchId='yesterday' is not valid: startingBatchId "
                                        "accepts a batch id"):
        spark.read.format("sparkjournal").option("startingBatchId", "yesterday").load(journal)
