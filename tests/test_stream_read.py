"""``spark.readStream.format("sparkjournal")`` on real local Spark, into Spark's
exactly-once parquet sink: replay from the start, follow new commits, restart
from the checkpoint without replaying or skipping, read limits, availableNow,
and the stable point (an undecided transaction holds its lane)."""
from __future__ import annotations

import collections
import os

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from sparkjournal import JournalSink  # noqa: E402
from sparkjournal.events.commit_log import CommitLog  # noqa: E402
from sparkjournal.spark.lane_writer import WritePlan, write_task  # noqa: E402


def events(spark, start, count):
    return spark.range(start, start + count, numPartitions=2).selectExpr(
        "id", "cast(id as string) as key")


def run_available_now(spark, path, tmp_path, **options):
    """One availableNow run of journal -> parquet; returns the query's progress."""
    reader = spark.readStream.format("sparkjournal")
    for key, value in options.items():
        reader = reader.option(key, value)
    query = (reader.load(path).select("id", "_batch_id", "_record_id").writeStream
             .format("parquet").option("path", str(tmp_path / "out"))
             .option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    query.awaitTermination(120)
    assert query.exception() is None
    return query.recentProgress


def landed(spark, tmp_path) -> collections.Counter:
    out = str(tmp_path / "out")
    if not os.path.exists(out):
        return collections.Counter()
    return collections.Counter(row.id for row in spark.read.parquet(out).collect())


def test_stream_replays_then_continues_after_restart_exactly_once(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    sink(events(spark, 0, 300), 0)
    sink(events(spark, 300, 300), 1)
    run_available_now(spark, path, tmp_path)
    assert landed(spark, tmp_path) == collections.Counter(range(600))
    sink(events(spark, 600, 200), 2)                 # new commits after the first run
    sink(events(spark, 800, 200), 3)
    run_available_now(spark, path, tmp_path)          # restarted from its checkpoint
    counts = landed(spark, tmp_path)
    assert counts == collections.Counter(range(1000)), "every event exactly once"
    progress = run_available_now(spark, path, tmp_path)    # nothing new: nothing read
    assert sum(p["numInputRows"] for p in progress) == 0
    assert landed(spark, tmp_path) == counts


def test_continuous_stream_follows_new_commits(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    sink(events(spark, 0, 100), 0)
    seen = []
    query = (spark.readStream.format("sparkjournal").load(path).writeStream
             .foreachBatch(lambda frame, _batch: seen.extend(r.id for r in frame.collect()))
             .option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(processingTime="200 milliseconds").start())
    try:
        query.processAllAvailable()
        assert sorted(seen) == list(range(100))
        sink(events(spark, 100, 50), 1)
        query.processAllAvailable()
        assert sorted(seen) == list(range(150))
    finally:
        query.stop()


def test_max_rows_per_trigger_splits_the_backlog_into_several_batches(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    for batch in range(6):                            # 12 records of 100 rows
        sink(events(spark, batch * 200, 200), batch)
    progress = run_available_now(spark, path, tmp_path, maxRowsPerTrigger=250)
    sizes = [p["numInputRows"] for p in progress if p["numInputRows"]]
    assert len(sizes) >= 4 and max(sizes) <= 300, sizes   # whole 100-row records, >= 1 each
    assert landed(spark, tmp_path) == collections.Counter(range(1200))


def test_max_bytes_per_trigger_is_honoured_with_at_least_one_record(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    for batch in range(3):
        sink(events(spark, batch * 200, 200), batch)
    progress = run_available_now(spark, path, tmp_path, maxBytesPerTrigger="1")
    sizes = [p["numInputRows"] for p in progress if p["numInputRows"]]
    assert sizes == [100] * 6                         # one record per trigger
    assert landed(spark, tmp_path) == collections.Counter(range(600))


def test_starting_batch_id_skips_earlier_batches(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    for batch in range(3):
        sink(events(spark, batch * 100, 100), batch)
    run_available_now(spark, path, tmp_path, startingBatchId=1)
    assert landed(spark, tmp_path) == collections.Counter(range(100, 300))


def test_undecided_transaction_holds_its_lane_until_decided(spark, tmp_path):
    path = str(tmp_path / "journal")
    log_uri = os.path.join(path, "_commits")
    JournalSink(path, txnAppId="q")(events(spark, 0, 100), 0)
    table = pa.table({"id": pa.array(range(1000, 1010), pa.int64()),
                      "key": [str(i) for i in range(1000, 1010)]})
    # This process writes one lane: first an undecided batch of query q, then a
    # decided batch of another writer behind it in the same lane.
    undecided = write_task(iter(table.to_batches()), WritePlan(path, (), log_uri, "q", 1))
    later = pa.table({"id": pa.array(range(2000, 2010), pa.int64()),
                      "key": [str(i) for i in range(2000, 2010)]})
    decided = write_task(iter(later.to_batches()), WritePlan(path, (), log_uri, "other", 0))
    assert undecided.lane == decided.lane and decided.tx > undecided.tx
    CommitLog(log_uri).record("other", 0, [decided.decided()])
    run_available_now(spark, path, tmp_path)
    # The decided batch sits behind the undecided one: it waits, or a later
    # decision of q's batch 1 would land below an offset already passed.
    assert landed(spark, tmp_path) == collections.Counter(range(100))
    CommitLog(log_uri).record("q", 1, [undecided.decided()])
    run_available_now(spark, path, tmp_path)
    expected = list(range(100)) + list(range(1000, 1010)) + list(range(2000, 2010))
    assert landed(spark, tmp_path) == collections.Counter(expected)


def test_skip_corrupt_stream_reads_every_undamaged_event_once(spark, tmp_path):
    """The driver plans offsets over the lane as the scan sees it: a damaged
    file left out, not a failed query."""
    from test_reader import corrupted_journal
    path, _lane, damaged = corrupted_journal(spark, tmp_path)
    batch_read = collections.Counter(row.id for row in spark.read.format("sparkjournal")
                                     .option("skipCorrupt", "true").load(path).collect())
    assert 0 < len(batch_read) < 12000
    # read limits size the batches on the driver, from the same view of the lane
    progress = run_available_now(spark, path, tmp_path, skipCorrupt="true",
                                 maxRowsPerTrigger=3000)
    assert len([p for p in progress if p["numInputRows"]]) >= 3
    assert landed(spark, tmp_path) == batch_read
    assert os.path.exists(damaged)                  # a read never moves anything
