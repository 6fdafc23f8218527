"""The sink's small-batch collect (sparkjournal/spark/small_batch.py): a
micro-batch of at most ``limit`` rows comes to the driver whole, as
``toArrow`` gives it; one more row and it does not come at all. Both ways
are run - the JVM connector's one job over the batch's own plan, and
``limit(n + 1).toArrow()`` where the connector is not loaded - and must
agree. A query stopped while a small batch is being collected ends as
stopped, lands nothing of that batch, and its restart lands it once."""
from __future__ import annotations

import glob
import os
import tempfile
import threading
import time

import pytest

pytest.importorskip("pyspark")

from pyspark.errors.exceptions.captured import CapturedException  # noqa: E402

from sparkjournal import JournalSink, read_table  # noqa: E402
from sparkjournal.spark import small_batch  # noqa: E402
from sparkjournal.spark.small_batch import SmallBatchError, collect_small  # noqa: E402


@pytest.fixture
def both_ways(spark, monkeypatch):
    """collect_small through the JVM connector, then through limit + toArrow."""
    if small_batch._jvm_collector(spark.range(1)) is None:
        pytest.skip("the JVM connector is not loaded in the test SparkSession")

    def collect(df, limit):
        jvm = collect_small(df, limit)
        with monkeypatch.context() as patched:
            patched.setattr(small_batch, "_jvm_collector", lambda _df: None)
            fallback = collect_small(df, limit)
        assert (jvm[1], fallback[1]) == ("jvm", "limit")
        return jvm[0], fallback[0]
    return collect


def leftover_files() -> list[str]:
    return glob.glob(os.path.join(tempfile.gettempdir(), f"{small_batch._PREFIX}*"))


def typed_events(spark, count: int, partitions: int):
    return spark.range(0, count, numPartitions=partitions).selectExpr(
        "id", "timestamp_seconds(id) as ts", "cast(id as decimal(12, 2)) as price",
        "case when id % 3 = 0 then null else concat('k', id) end as key",
        "named_struct('a', id, 'b', array(id, id + 1)) as nested",
        "map('m', cast(id as double)) as attrs", "cast(cast(id as string) as binary) as raw")


def test_a_small_batch_comes_whole_in_toarrow_types(spark, both_ways):
    df = typed_events(spark, 50, 3)
    expected = df.toArrow()
    before = leftover_files()
    for table in both_ways(df, 50):
        assert table is not None
        assert table.cast(expected.schema).equals(expected), "same rows, same order, same values"
    assert leftover_files() == before, "the collect file is removed once read"


def test_one_row_over_the_limit_is_not_small(spark, both_ways):
    df = typed_events(spark, 21, 2)
    assert both_ways(df, 20) == (None, None)
    jvm, fallback = both_ways(df, 21)
    assert jvm.num_rows == fallback.num_rows == 21


def test_a_large_batch_over_many_partitions_is_not_collected(spark, both_ways):
    df = typed_events(spark, 8000, 8)           # 1000 rows in each partition, all over the limit
    before = leftover_files()
    assert both_ways(df, 10) == (None, None)
    assert leftover_files() == before


def test_an_empty_batch_is_an_empty_table(spark, both_ways):
    df = typed_events(spark, 0, 2)
    for table in both_ways(df, 10):
        assert table.num_rows == 0 and table.schema.names == df.columns


def test_a_failing_batch_names_the_cause(spark):
    df = spark.range(0, 5, numPartitions=2).selectExpr(
        "id", "if(id = 3, raise_error('tampered input row'), id) as checked")
    before = leftover_files()
    if small_batch._jvm_collector(df) is None:
        pytest.skip("the JVM connector is not loaded in the test SparkSession")
    with pytest.raises((SmallBatchError, CapturedException)) as raised:
        collect_small(df, 100)          # Spark's own error where PySpark knows it, as toArrow's
    message = str(raised.value)
    assert "tampered input row" in message and len(message) < 2000, message
    assert leftover_files() == before


def _wait_for_a_job(spark, timeout: float = 60.0) -> None:
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + timeout
    while not tracker.getActiveJobsIds():
        assert time.monotonic() < deadline, "no job started"
        time.sleep(0.05)


def test_a_query_stopped_during_a_small_batch_ends_as_stopped(spark, tmp_path):
    if small_batch._jvm_collector(spark.range(1)) is None:
        pytest.skip("the JVM connector is not loaded in the test SparkSession")
    path, checkpoint, incoming = (str(tmp_path / name) for name in ("journal", "checkpoint", "in"))
    spark.range(0, 100, numPartitions=1).write.parquet(incoming)

    def start(slow: bool):
        # the slow run's collect job sleeps on one row, so the stop lands inside it
        pause = ("reflect('java.lang.Thread', 'sleep', cast(if(id = 0, 20000, 0) as bigint))"
                 if slow else "cast(null as string)")
        source = spark.readStream.schema("id long").parquet(incoming).selectExpr(
            "id", f"{pause} as paused")
        return (source.writeStream.foreachBatch(JournalSink(path))
                .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())

    query = start(slow=True)
    _wait_for_a_job(spark)
    time.sleep(0.5)
    stopper = threading.Thread(target=query.stop)
    stopper.start()
    stopper.join(60)
    assert not stopper.is_alive() and not query.isActive
    assert query.exception() is None, query.exception()
    assert read_table(path) is None or read_table(path).num_rows == 0, "nothing of the batch"

    query = start(slow=False)
    query.awaitTermination()
    assert query.exception() is None, query.exception()
    assert sorted(read_table(path).column("id").to_pylist()) == list(range(100))
