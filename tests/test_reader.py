"""``spark.read.format("sparkjournal")`` on real local Spark: what the write path
committed, with its metadata columns, and nothing else."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from sparkjournal import JournalSink, read_table  # noqa: E402
from sparkjournal.journal.lanes import list_lanes  # noqa: E402
from sparkjournal.spark.commit_log import CommitLog  # noqa: E402
from sparkjournal.spark.lane_writer import WritePlan, write_task  # noqa: E402


def frame(spark, start, count):
    return spark.range(start, start + count, numPartitions=2).selectExpr(
        "id", "cast(id as string) as key")


def test_format_read_returns_committed_events_with_metadata(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    sink(frame(spark, 0, 600), 0)
    sink(frame(spark, 600, 400), 1)
    read = spark.read.format("sparkjournal").load(path)
    assert read.columns == ["id", "key", "_batch_id", "_commit_time", "_host", "_lane", "_record_id"]
    rows = read.collect()
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
    CommitLog(log_uri).record("q", 1, [message])
    ids = sorted(r.id for r in spark.read.format("sparkjournal").load(path).collect())
    assert ids == list(range(10)) + list(range(100, 110))


def test_column_added_later_reads_back_null_for_older_events(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    sink(frame(spark, 0, 5), 0)
    sink(frame(spark, 5, 5).selectExpr("*", "if(id > 6, 'late', null) as note"), 1)
    rows = sorted(spark.read.format("sparkjournal").load(path).collect(), key=lambda r: r.id)
    assert [r.note for r in rows] == [None] * 7 + ["late"] * 3


def test_corrupt_record_fails_the_read_naming_file_and_offset(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", fileSize="64k", bufferSize="16k")
    for batch in range(3):                       # ~250 KB per task: several files per lane
        sink(frame(spark, batch * 4000, 4000).selectExpr("*", "repeat('x', 100) as payload"), batch)
    lane = os.path.join(path, list_lanes(path)[0])
    first = sorted(f for f in os.listdir(lane) if f.endswith(".sjd"))[0]
    with open(os.path.join(lane, first), "r+b") as handle:
        handle.seek(4096 + 200)
        byte = handle.read(1)
        handle.seek(4096 + 200)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(Exception, match=r"is corrupt at offset 4096"):
        spark.read.format("sparkjournal").load(path).collect()
    with pytest.raises(Exception, match="is corrupt at offset"):
        read_table(path)
