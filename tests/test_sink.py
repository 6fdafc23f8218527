"""The exactly-once write path on real local Spark: the foreachBatch sink and the
``sparkjournal`` data source writers, their two-phase commit, replays, task
failures and schema rules. Read back through the visibility rule readers use."""
from __future__ import annotations

import json
import os

import pytest

pytest.importorskip("pyspark")

from sparkjournal import ConfigError, JournalSink, read_table  # noqa: E402
from sparkjournal.journal.journal import Journal  # noqa: E402
from sparkjournal.events.commit_log import CommitLog  # noqa: E402
from sparkjournal.spark.lane_writer import INJECT_FAILURE  # noqa: E402
from sparkjournal.events.node import read_node_id  # noqa: E402
from sparkjournal.events.resolve import Outcome, prepared_outcomes  # noqa: E402
from sparkjournal.spark.schema import SchemaMismatchError  # noqa: E402
from sparkjournal.events.visible_events import lanes_of  # noqa: E402
from sparkjournal.events.xid import BatchXid  # noqa: E402


def events(spark, start, count, partitions=2):
    return spark.range(start, start + count, numPartitions=partitions).selectExpr(
        "id", "timestamp_seconds(id) as ts", "substr(sha2(cast(id as string), 256), 1, 16) as key",
        "repeat('p', 200) as payload", "cast(id * 1.5 as double) as amount")


def ids_of(path):
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


@pytest.fixture
def inject(spark):
    """Sets the sink's fault-injection local property for the test's jobs."""
    context = spark.sparkContext

    def set_point(value):
        context.setLocalProperty(INJECT_FAILURE, value)
    yield set_point
    context.setLocalProperty(INJECT_FAILURE, None)


def test_replayed_batch_id_is_skipped_and_reported(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0)    # executor tasks write
    sink(events(spark, 0, 1000), 0)
    sink(events(spark, 1000, 1000), 1)
    sink(events(spark, 1000, 1000), 1)              # Spark re-runs batch 1
    restarted = JournalSink(path, txnAppId="q", smallBatchRows=0)   # ... after a driver restart
    restarted(events(spark, 1000, 1000), 1)
    restarted(events(spark, 2000, 500), 2)

    assert ids_of(path) == list(range(2500))
    assert [m.skipped for m in sink.history] == [False, False, True]
    assert [m.skipped for m in restarted.history] == [True, False]
    assert sink.history[0].rows == 1000 and sink.history[0].tasks == 2
    assert CommitLog(os.path.join(path, "_commits")).batches("q") == [0, 1, 2]


def test_failed_attempt_after_prepare_is_never_visible(spark, tmp_path, inject):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0)    # tasks, which the fault hits
    inject("afterPrepare:0")                         # partition 0's first attempt dies prepared
    sink(events(spark, 0, 1000), 0)
    inject(None)
    losers = [(xid.partition, xid.attempt) for xid, fate in prepared_in_lanes(path)
              if fate is Outcome.ABORTED]
    assert losers == [(0, 0)], "the failed attempt's PREPARE is durable and aborted"
    assert ids_of(path) == list(range(1000))
    sink(events(spark, 1000, 10), 1)                 # the next batch resolves the lanes

    assert ids_of(path) == list(range(1010))
    decision = CommitLog(os.path.join(path, "_commits")).decision("q", 0)
    assert len(decision.txs) == 2 and decision.rows == 1000


def prepared_in_lanes(path):
    """(xid, outcome) of every prepared transaction in every lane."""
    found = []
    for lane in lanes_of(path):
        node = read_node_id(os.path.dirname(lane))
        with Journal.read(lane) as snapshot:
            fates = prepared_outcomes(snapshot, node, os.path.basename(lane))
            found += [(BatchXid.decode(p.xid), fates[p.tx_id]) for p in snapshot.prepared()]
    return found


def test_failed_attempt_before_prepare_is_rolled_back(spark, tmp_path, inject):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0)    # tasks, which the fault hits
    inject("afterWrite:1")
    sink(events(spark, 0, 1000), 0)
    inject(None)
    assert ids_of(path) == list(range(1000))
    assert sink.history[0].tasks == 2


def test_incompatible_schema_fails_naming_the_columns(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    sink(events(spark, 0, 10), 0)
    wrong = events(spark, 10, 10).selectExpr("id", "ts", "key", "cast(amount as string) as amount")
    with pytest.raises(SchemaMismatchError) as error:
        sink(wrong, 1)
    message = str(error.value)
    assert "missing column(s) payload" in message
    assert "column amount is string, the journal holds double" in message
    assert "batch 1 of query q" in message
    assert ids_of(path) == list(range(10))


def test_added_nullable_column_reads_back_null_for_older_events(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q")
    sink(events(spark, 0, 10), 0)
    note = "if(id % 2 = 0, cast(id as string), null) as note"      # nullable
    sink(events(spark, 10, 10).selectExpr("*", note), 1)
    with pytest.raises(SchemaMismatchError, match=r"new column\(s\) extra are not nullable"):
        sink(events(spark, 20, 10).selectExpr("*", note, "1 as extra"), 2)
    table = read_table(path).sort_by("id")
    assert table.column("note").to_pylist() == [None] * 10 + [
        str(i) if i % 2 == 0 else None for i in range(10, 20)]


def test_unknown_option_is_rejected_before_any_task(tmp_path):
    with pytest.raises(ConfigError, match="fileSiz"):
        JournalSink(str(tmp_path / "journal"), fileSiz="10m")


def test_streaming_query_restarted_from_checkpoint_lands_every_event_once(spark, tmp_path):
    # Each run ends by itself (availableNow) between batches: stopping a query while
    # its foreachBatch runs makes Spark 4 match the Python error with a regex that can
    # overflow the stream thread's stack, which would test Spark, not this sink.
    path, checkpoint, incoming = (str(tmp_path / name) for name in ("journal", "checkpoint", "in"))
    landed = []
    for run, files in enumerate(((0, 1, 2), (3, 4))):
        for number in files:
            spark.range(number * 100, number * 100 + 100, numPartitions=1).selectExpr(
                "id", "timestamp_seconds(id) as ts").write.parquet(f"{incoming}/part-{number}")
        source = (spark.readStream.schema("id long, ts timestamp").option("maxFilesPerTrigger", 1)
                  .option("recursiveFileLookup", "true").parquet(incoming))
        sink = JournalSink(path)                       # identified by the query id
        query = (source.writeStream.foreachBatch(sink).option("checkpointLocation", checkpoint)
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        assert query.exception() is None, f"run {run} failed: {query.exception()}"
        landed.append(sink.batches_landed)
    ids = ids_of(path)
    assert len(ids) == len(set(ids)), "an event landed twice"
    assert ids == list(range(500)), "an event is missing"
    assert landed == [3, 2], "each run lands only the files it had not landed"


def test_format_writer_batch_append_and_overwrite_refused(spark, tmp_path):
    path = str(tmp_path / "journal")
    events(spark, 0, 300).write.format("sparkjournal").mode("append").save(path)
    events(spark, 300, 300).write.format("sparkjournal").mode("append").save(path)
    assert ids_of(path) == list(range(600))
    with pytest.raises(Exception, match="append-only"):
        events(spark, 0, 1).write.format("sparkjournal").mode("overwrite").save(path)


def test_format_stream_writer_lands_each_event_once(spark, tmp_path):
    path, checkpoint = str(tmp_path / "journal"), str(tmp_path / "checkpoint")
    source_dir = tmp_path / "in"
    source_dir.mkdir()
    for n in range(3):
        rows = [json.dumps({"id": n * 100 + i, "key": f"k{i}"}) for i in range(100)]
        (source_dir / f"part-{n}.json").write_text("\n".join(rows))
    for _ in range(2):                                   # the second run has nothing new
        query = (spark.readStream.schema("id LONG, key STRING").json(str(source_dir))
                 .writeStream.format("sparkjournal").option("checkpointLocation", checkpoint)
                 .trigger(availableNow=True).start(path))
        query.awaitTermination()
    assert ids_of(path) == list(range(300))


# --- small batches written by the driver (smallBatchRows) ------------------------------------
def prepared_left(path):
    """Prepared transactions still waiting in the lanes (none once COMMIT landed)."""
    left = 0
    for lane in lanes_of(path):
        with Journal.read(lane) as snapshot:
            left += len(snapshot.prepared())
    return left


def test_small_batches_are_written_by_the_driver_and_committed_at_once(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=100)
    sink(events(spark, 0, 100), 0)                   # at the limit: the driver writes it
    sink(events(spark, 100, 50), 1)
    assert ids_of(path) == list(range(150))
    assert [(m.on_driver, m.rows, m.tasks) for m in sink.history] == [(True, 100, 1), (True, 50, 1)]
    assert "from the driver" in sink.history[0].line()
    assert [m.lanes_committed_now for m in sink.history] == [1, 1]
    assert prepared_left(path) == 0, "the driver's own lane waits for no later COMMIT"
    sink(events(spark, 100, 50), 1)                  # Spark re-runs batch 1
    assert sink.history[-1].skipped and ids_of(path) == list(range(150))


def test_a_batch_over_small_batch_rows_goes_to_the_executors_and_back(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=100)
    sink(events(spark, 0, 101), 0)                   # one over: the tasks write it
    sink(events(spark, 101, 10), 1)                  # learnt from the last batch: tasks again
    sink(events(spark, 111, 10), 2)                  # the last batch was small: the driver
    assert ids_of(path) == list(range(121))
    assert [(m.on_driver, m.tasks) for m in sink.history] == [(False, 2), (False, 2), (True, 1)]


def test_driver_and_executors_store_the_same_records(spark, tmp_path):
    tables = []
    for name, rows in (("driver", 1000), ("executors", 0)):
        path = str(tmp_path / name)
        JournalSink(path, txnAppId="q", smallBatchRows=rows)(events(spark, 0, 40, partitions=1), 0)
        tables.append(read_table(path).sort_by("id").select(["id", "ts", "key", "payload", "amount"]))
    assert tables[0].equals(tables[1])
    assert tables[0].schema == tables[1].schema      # same Arrow types, time zone included


@pytest.mark.parametrize("value", ["-1", "many"])
def test_small_batch_rows_must_be_a_whole_number(tmp_path, value):
    with pytest.raises(ConfigError, match="smallBatchRows.*whole number from 0 up"):
        JournalSink(str(tmp_path / "journal"), smallBatchRows=value)
