"""``spark.read.format("sparkjournal")`` on real local Spark: what the write path
committed, with its metadata columns, and nothing else."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from lane_surgery import flip  # noqa: E402
from sparkjournal import JournalSink, read_table  # noqa: E402
from sparkjournal.journal.lanes import list_lanes  # noqa: E402
from sparkjournal.events.commit_log import CommitLog  # noqa: E402
from sparkjournal.events.lane_scan import LaneSlice, WrongNodeError, scan  # noqa: E402
from sparkjournal.spark.lane_writer import WritePlan, write_task  # noqa: E402
from sparkjournal.events.visible_events import node_lanes  # noqa: E402


def frame(spark, start, count):
    return spark.range(start, start + count, numPartitions=2).selectExpr(
        "id", "cast(id as string) as key")


def test_format_read_returns_committed_events_with_metadata(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    sink(frame(spark, 0, 600), 0)
    sink(frame(spark, 600, 400), 1)
    read = spark.read.format("sparkjournal").load(path)
    assert read.columns == ["id", "key", "_batch_id", "_commit_time", "_host", "_lane", "_record_id",
                            "_row"]
    rows = read.collect()
    assert len({(r._lane, r._record_id, r._row) for r in rows}) == 1000    # one key per event
    assert sorted(r.id for r in rows) == list(range(1000))
    assert {r._batch_id for r in rows if r.id < 600} == {0}
    assert {r._batch_id for r in rows if r.id >= 600} == {1}
    assert all(r._commit_time is not None and r._lane.startswith("lane-") for r in rows)
    assert read.filter("_batch_id = 1").count() == 400


def test_prepared_but_undecided_transaction_is_invisible_until_decided(spark, tmp_path):
    path = str(tmp_path / "journal")
    log_uri = os.path.join(path, "_commits")
    JournalSink(path, txnAppId="q")(frame(spark, 0, 10), 0)     # schema and one batch
    table = pa.table({"id": pa.array(range(100, 110), pa.int64()),
                      "key": [str(i) for i in range(100, 110)]})
    message = write_task(iter(table.to_batches()), WritePlan(path, (), log_uri, "q", 1))
    assert spark.read.format("sparkjournal").load(path).count() == 10
    CommitLog(log_uri).record("q", 1, [message.decided()])
    ids = sorted(r.id for r in spark.read.format("sparkjournal").load(path).collect())
    assert ids == list(range(10)) + list(range(100, 110))


def test_column_added_later_reads_back_null_for_older_events(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    sink(frame(spark, 0, 5), 0)
    sink(frame(spark, 5, 5).selectExpr("*", "if(id > 6, 'late', null) as note"), 1)
    rows = sorted(spark.read.format("sparkjournal").load(path).collect(), key=lambda r: r.id)
    assert [r.note for r in rows] == [None] * 7 + ["late"] * 3


def corrupted_journal(spark, tmp_path) -> tuple[str, str, str]:
    """(journal, a lane, its first data file - damaged in its first record)."""
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", fileSize="64k", bufferSize="16k")
    for batch in range(3):                       # ~250 KB per task: several files per lane
        sink(frame(spark, batch * 4000, 4000).selectExpr("*", "repeat('x', 100) as payload"), batch)
    lane = os.path.join(path, list_lanes(path)[0])
    first = os.path.join(lane, sorted(f for f in os.listdir(lane) if f.endswith(".sjd"))[0])
    flip(first, 4096 + 200)                     # the first record's body
    return path, lane, first


def test_corrupt_record_fails_the_read_naming_file_and_offset(spark, tmp_path):
    path, _lane, _damaged = corrupted_journal(spark, tmp_path)
    with pytest.raises(Exception, match=r"is corrupt at offset 4096"):
        spark.read.format("sparkjournal").load(path).collect()
    with pytest.raises(Exception, match="is corrupt at offset"):
        read_table(path)


def test_skip_corrupt_reads_the_rest_and_reports_what_was_skipped(spark, tmp_path):
    path, lane, damaged = corrupted_journal(spark, tmp_path)
    read = spark.read.format("sparkjournal").option("skipCorrupt", "true").load(path)
    survivors = sorted(row.id for row in read.select("id").collect())
    assert 0 < len(survivors) < 12000 and len(set(survivors)) == len(survivors)
    skipped = []
    node = dict(node_lanes(path))[lane]
    log_uri = os.path.join(path, "_commits")
    list(scan(LaneSlice(lane, node, log_uri, skip_corrupt=True),
              CommitLog(log_uri).read_schema(), {}, skipped))
    assert [entry["file"] for entry in skipped] == [damaged]
    assert skipped[0]["offset"] == 4096 and skipped[0]["lost_record_ids"]
    assert os.path.exists(damaged)                  # a read never moves anything


def test_lane_read_on_a_node_that_does_not_hold_it_fails_naming_both(spark, tmp_path):
    path = str(tmp_path / "journal")
    JournalSink(path, txnAppId="q")(frame(spark, 0, 10), 0)
    lane, node = next(iter(node_lanes(path)))
    log_uri = os.path.join(path, "_commits")
    stranger = LaneSlice(lane, "0123456789abcdef@elsewhere", log_uri)
    with pytest.raises(WrongNodeError, match=r"held by node 0123456789abcdef@elsewhere \(host "
                       r"elsewhere\).*has NODE_ID " + node.split("@")[0]):
        list(scan(stranger, CommitLog(log_uri).read_schema(), {}))
