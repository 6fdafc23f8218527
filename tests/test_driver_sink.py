"""The driver-side foreachBatch sink against real local Spark: a batch id Spark
replays (same id, same data) lands once, also across a restart of the sink."""
from __future__ import annotations

import pytest

pyspark = pytest.importorskip("pyspark")

from sparkjournal.spark.driver_sink import DriverJournalSink, committed_batches, read_events  # noqa: E402


@pytest.fixture(scope="session")
def spark():
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("sparkjournal-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    yield session
    session.stop()


def _events(spark, start, count):
    return spark.range(start, start + count).selectExpr(
        "id", "cast(id as string) as key", "id * 1.5 as amount")


def test_replayed_batch_lands_once_across_sink_restart(spark, tmp_path):
    root = str(tmp_path / "journal")
    sink = DriverJournalSink(root, query_name="q")
    sink(_events(spark, 0, 1000), 0)
    sink(_events(spark, 1000, 1000), 1)
    sink(_events(spark, 1000, 1000), 1)            # Spark re-runs batch 1 in the same run
    sink.close()
    restarted = DriverJournalSink(root, query_name="q")
    restarted(_events(spark, 1000, 1000), 1)        # ... and after the driver restarted
    restarted(_events(spark, 2000, 500), 2)
    restarted.close()

    table = read_events(root)
    ids = sorted(table.column("id").to_pylist())
    assert ids == list(range(2500))
    assert committed_batches(sink.root) == {"q": {0, 1, 2}}


def test_empty_batch_is_recorded_and_holds_no_events(spark, tmp_path):
    root = str(tmp_path / "journal")
    sink = DriverJournalSink(root, query_name="q")
    sink(_events(spark, 0, 0), 0)
    sink.close()
    assert read_events(root) is None
    assert committed_batches(sink.root) == {"q": {0}}
