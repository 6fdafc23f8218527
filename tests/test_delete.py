"""``sparkjournal.delete``: events deleted by predicate are gone from every read
at once, whether or not the lane's writer could carry the request out yet, and
stay gone through compaction, which drops them physically."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")

import sparkjournal  # noqa: E402
from sparkjournal import Journal, JournalSink, read_table  # noqa: E402
from sparkjournal.errors import SparkJournalError  # noqa: E402
from sparkjournal.events.deletions import DELETION_VECTOR  # noqa: E402
from sparkjournal.config import load_config  # noqa: E402
from sparkjournal.events.requests import pending  # noqa: E402
from sparkjournal.journal.lanes import list_lanes  # noqa: E402
from sparkjournal.maintenance.compactor import compact_lane  # noqa: E402
from sparkjournal.maintenance.lane_requests import apply_now  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def frame(spark, start, count):
    """Keys k0..k9 by id % 10, in two partitions."""
    return spark.range(start, start + count, numPartitions=2).selectExpr(
        "id", "concat('k', cast(id % 10 as string)) as key")


def ids(path) -> list[int]:
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def lanes_of(path) -> list[str]:
    return [os.path.join(path, lane) for lane in list_lanes(path)]


def carry_out_once_free(wait_lanes_free, lanes) -> None:
    """Once the sink's workers let the lanes go, carries out their requests as
    maintenance does. (Sinks whose lanes this waits for write through tasks,
    smallBatchRows=0: lanes held by Python workers, as on a cluster.)"""
    wait_lanes_free(lanes)
    for lane in lanes:
        assert apply_now(lane, load_config())


def vectors_in(lane) -> int:
    with Journal.read(lane) as snapshot:
        return sum(1 for r in snapshot.records() if r.user_type == DELETION_VECTOR)


def test_delete_by_predicate_removes_exactly_the_matching_events_from_every_read(spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", laneIdleTimeout="500ms", smallBatchRows=0)
    sink(frame(spark, 0, 1000), 0)
    sink(spark.range(1000, 1100, numPartitions=1).selectExpr("id", "'gone' as key"), 1)
    report = sparkjournal.delete(spark, path, "key = 'k3' or key = 'gone'")
    assert report.rows == 200
    assert report.records_whole >= 1 and report.records_partly >= 1, report.line()
    assert report.lanes and set(report.pending_lanes) <= set(report.lanes)
    expected = [i for i in range(1000) if i % 10 != 3]
    assert ids(path) == expected                     # at once, carried out or still pending
    by_format = spark.read.format("sparkjournal").load(path)
    assert sorted(r.id for r in by_format.select("id").collect()) == expected
    located = sparkjournal.read(spark, path)
    assert sorted(r.id for r in located.select("id").collect()) == expected
    carry_out_once_free(wait_lanes_free, lanes_of(path))
    assert not any(pending(lane) for lane in lanes_of(path))
    assert sum(vectors_in(lane) for lane in lanes_of(path)) >= 1
    assert ids(path) == expected


def test_nothing_matching_deletes_nothing_and_writes_no_request(spark, tmp_path):
    path = str(tmp_path / "journal")
    JournalSink(path, txnAppId="q")(frame(spark, 0, 100), 0)
    report = sparkjournal.delete(spark, path, "id < 0")
    assert (report.rows, report.lanes) == (0, [])
    assert ids(path) == list(range(100))


def test_a_predicate_that_is_not_spark_sql_fails_naming_it_and_the_columns(spark, tmp_path):
    path = str(tmp_path / "journal")
    JournalSink(path, txnAppId="q")(frame(spark, 0, 10), 0)
    with pytest.raises(SparkJournalError) as failure:
        sparkjournal.delete(spark, path, "no_such_column = 1")
    assert "no_such_column = 1" in str(failure.value) and "_record_id" in str(failure.value)
    assert ids(path) == list(range(10))


def test_a_delete_on_a_busy_lane_is_visible_at_once_and_carried_out_by_its_next_writer(spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", laneIdleTimeout="500ms", smallBatchRows=0)
    sink(frame(spark, 0, 500), 0)
    lanes = lanes_of(path)
    carry_out_once_free(wait_lanes_free, lanes)                       # the sink's workers let the lanes go
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom sparkjournal import Journal\n"
         "journals = [Journal.open(l) for l in sys.argv[1:]]\nprint('held', flush=True)\n"
         "time.sleep(60)\n", *lanes], stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": REPO})
    try:
        assert holder.stdout.readline() == b"held\n"
        report = sparkjournal.delete(spark, path, "key = 'k7'")
        assert report.rows == 50 and sorted(report.pending_lanes) == sorted(report.lanes)
        assert ids(path) == [i for i in range(500) if i % 10 != 7]       # readers apply it now
        assert any(pending(lane) for lane in lanes)
    finally:
        holder.kill()
        holder.wait()
    carry_out_once_free(wait_lanes_free, lanes)                       # the lanes' next writer carries it out
    assert not any(pending(lane) for lane in lanes)
    assert ids(path) == [i for i in range(500) if i % 10 != 7]


def test_deleted_rows_stay_deleted_through_compaction_which_drops_them(spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", fileSize="64k", bufferSize="16k", laneIdleTimeout="500ms",
                       smallBatchRows=0)
    for batch in range(6):                   # ~2.6 MB of events: several 64k files per lane
        sink(frame(spark, batch * 2000, 2000).selectExpr("*", "repeat('x', 200) as payload"), batch)
    gone = "key in ('k1', 'k2', 'k3', 'k4', 'k5')"
    assert sparkjournal.delete(spark, path, gone, fileSize="64k", bufferSize="16k").rows == 6000
    expected = [i for i in range(12000) if i % 10 not in (1, 2, 3, 4, 5)]
    assert ids(path) == expected
    carry_out_once_free(wait_lanes_free, lanes_of(path))              # the requests become deletion vectors
    reports = [compact_lane(lane, force=True, events=True, fileSize="64k", bufferSize="16k")
               for lane in lanes_of(path)]
    compacted = [r for r in reports if r.compacted]
    assert compacted, [r.line() for r in reports]
    assert all(r.bytes_after < r.bytes_before * 0.75 for r in compacted), [r.line() for r in compacted]
    assert ids(path) == expected
    # Positions stay the original ones: a second delete after compaction hits the right rows.
    assert sparkjournal.delete(spark, path, "key = 'k6'", fileSize="64k", bufferSize="16k").rows == 1200
    assert ids(path) == [i for i in expected if i % 10 != 6]
    by_format = spark.read.format("sparkjournal").load(path)
    assert sorted(r.id for r in by_format.select("id").collect()) == [i for i in expected if i % 10 != 6]
