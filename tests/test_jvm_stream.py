"""``spark.readStream.format("sparkjournal")`` through the JVM connector's
micro-batch stream, held to the Python stream reader (stream_reader.py,
registered beside it as ``sparkjournal-python``): the same journal read by
each, under the same options, must take the same offsets batch after batch
and land the same rows, every event exactly once. Plus what only this reader
meets: a checkpoint of either reader continues in the other, and a live
writer's open transaction holds the stream until that writer dies (the JVM
tells a live writer by the kernel's lock table, the Python reader by trying
the lock)."""
from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from sparkjournal import JournalSink  # noqa: E402
from sparkjournal.spark.datasource import JournalDataSource  # noqa: E402

import paged_journal  # noqa: E402

FORMATS = ("sparkjournal", "sparkjournal-python")


class PythonStreamSource(JournalDataSource):
    @classmethod
    def name(cls) -> str:
        return "sparkjournal-python"


@pytest.fixture(scope="module")
def both(spark):
    """The shared session, with the Python source registered as sparkjournal-python
    (shipped to Spark's planner process by value: it cannot import this module)."""
    from pyspark import cloudpickle
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark.dataSource.register(PythonStreamSource)
    return spark


def events(spark, start, count):
    return spark.range(start, start + count, numPartitions=2).selectExpr("id", "cast(id as string) as key")


def stream(spark, fmt, path, work, **options):
    """One availableNow run of ``fmt`` over ``path`` into a parquet sink under
    ``work``; returns the progress of its micro-batches."""
    reader = spark.readStream.format(fmt)
    for key, value in options.items():
        reader = reader.option(key, str(value))
    query = (reader.load(path).select("id", "_batch_id", "_record_id").writeStream
             .format("parquet").option("path", os.path.join(work, "out"))
             .option("checkpointLocation", os.path.join(work, "checkpoint"))
             .trigger(availableNow=True).start())
    query.awaitTermination(180)
    assert query.exception() is None, query.exception()
    return query.recentProgress


def offsets(work) -> list[dict]:
    """The source offsets Spark logged before each micro-batch, in batch order."""
    folder = os.path.join(work, "checkpoint", "offsets")
    logged = sorted((int(name) for name in os.listdir(folder) if name.isdigit()))
    return [json.loads(open(os.path.join(folder, str(n))).read().splitlines()[2]) for n in logged]


def landed(spark, work) -> collections.Counter:
    out = os.path.join(work, "out")
    if not os.path.exists(out):
        return collections.Counter()
    return collections.Counter(row.id for row in spark.read.parquet(out).collect())


def run_both(spark, path, tmp_path, **options) -> dict:
    """{format: (offsets, landed rows, progress)} of one availableNow run each."""
    found = {}
    for fmt in FORMATS:
        work = str(tmp_path / fmt)
        progress = stream(spark, fmt, path, work, **options)
        found[fmt] = (offsets(work), landed(spark, work), progress)
    return found


@pytest.mark.parametrize("options", [{}, {"maxRowsPerTrigger": 250}, {"maxBytesPerTrigger": "1"},
                                     {"startingBatchId": 3, "maxRowsPerTrigger": 400}],
                         ids=["all", "maxRows", "maxBytes", "startingBatchId"])
def test_jvm_stream_takes_the_python_streams_offsets_and_rows(both, tmp_path, options):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    for batch in range(6):
        sink(events(both, batch * 200, 200), batch)
    found = run_both(both, path, tmp_path, **options)
    jvm, python = found["sparkjournal"], found["sparkjournal-python"]
    assert jvm[0] == python[0], "the same offsets, batch after batch"
    assert jvm[1] == python[1]
    first = options.get("startingBatchId", 0) * 200
    assert jvm[1] == collections.Counter(range(first, 1200)), "every event exactly once"
    if options.get("maxBytesPerTrigger") == "1":
        assert [p["numInputRows"] for p in jvm[2] if p["numInputRows"]] == [100] * 12


def test_jvm_stream_is_the_connectors_micro_batch_stream(both, tmp_path):
    path = str(tmp_path / "journal")
    JournalSink(path, txnAppId="q")(events(both, 0, 100), 0)
    progress = stream(both, "sparkjournal", path, str(tmp_path / "jvm"))
    assert progress[0]["sources"][0]["description"] == f"sparkjournal stream {path}"


def test_paged_lane_with_deletes_streams_alike_cut_inside_pages(both, tmp_path):
    """Pages straddle the micro-batches' ends (150 rows of 100-row records):
    each batch takes exactly its records' rows out of the page files."""
    path = str(tmp_path / "journal")
    lane, node, log_uri = paged_journal.make_root(path, batches=6, rows=300)
    paged_journal.page(lane, node, log_uri)
    assert paged_journal.page_files(lane), "the lane has a page file"
    paged_journal.delete(lane, {1: [0, 1, 2], 12: None})
    expected = collections.Counter(row[0] for row in paged_journal.rows(path))
    found = run_both(both, path, tmp_path, maxRowsPerTrigger=150)
    jvm, python = found["sparkjournal"], found["sparkjournal-python"]
    assert jvm[0] == python[0]
    assert len(jvm[0]) > 5
    assert jvm[1] == python[1] == expected


def test_a_python_streams_checkpoint_continues_in_the_jvm_stream_exactly_once(both, tmp_path):
    path = str(tmp_path / "journal")
    work = str(tmp_path / "work")
    sink = JournalSink(path, txnAppId="q")
    sink(events(both, 0, 300), 0)
    stream(both, "sparkjournal-python", path, work)
    sink(events(both, 300, 300), 1)
    progress = stream(both, "sparkjournal", path, work)
    assert sum(p["numInputRows"] for p in progress) == 300
    assert landed(both, work) == collections.Counter(range(600))
    sink(events(both, 600, 100), 2)
    stream(both, "sparkjournal-python", path, work)
    assert landed(both, work) == collections.Counter(range(700)), "and back again"


WRITER = r"""
import sys, time
import pyarrow as pa
from sparkjournal import Journal
from sparkjournal.events import event_records
def body(start, count, batch):
    table = pa.table({"id": pa.array(range(start, start + count), pa.int64()),
                      "payload": [str(i) for i in range(start, start + count)]})
    return event_records.tag(table.to_batches()[0], "w", batch)
with Journal.open(sys.argv[1], fileSize="64k", bufferSize="16k") as journal:
    journal.append_batch([body(5000, 10, 10)], user_type=event_records.EVENTS, sync=True)
    tx = journal.next_tx_id()
    journal.append_batch([body(6000, 10, 11)], user_type=event_records.EVENTS, tx_id=tx, sync=True)
    journal.append_batch([body(7000, 10, 12)], user_type=event_records.EVENTS, sync=True)
    print("written", flush=True)
    time.sleep(600)
"""


def test_open_transaction_of_a_live_writer_holds_the_stream_until_the_writer_dies(both, tmp_path):
    path = str(tmp_path / "journal")
    lane, _node, _log_uri = paged_journal.make_root(path, batches=1, rows=100)
    lane = os.path.join(path, "lane-001")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, lane], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "written"
        found = run_both(both, path, tmp_path)
        held = collections.Counter(list(range(100)) + list(range(5000, 5010)))
        for fmt in FORMATS:
            assert found[fmt][1] == held, f"{fmt}: the committed record behind the open transaction waits"
        assert found["sparkjournal"][0] == found["sparkjournal-python"][0]
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    time.sleep(0.1)
    found = run_both(both, path, tmp_path)
    done = held + collections.Counter(range(7000, 7010))
    for fmt in FORMATS:
        assert found[fmt][1] == done, f"{fmt}: a dead writer's open transaction holds nothing and is never read"
    assert found["sparkjournal"][0] == found["sparkjournal-python"][0]
