"""The JVM reader hands Spark a short string column's values as one shared
on-heap copy per distinct value (jvm/.../spark/StringDictionary.java), as
parquet's dictionary-encoded columns do, so Spark's hash aggregation takes a
key's bytes without copying them; long values and mostly distinct columns are
read from the mapped records as before. Every read returns exactly the rows
Spark wrote, and the scan's ``sharedStringValues`` metric says which path each
column took."""
from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from sparkjournal.spark import connector  # noqa: E402

ROWS = 30_000
COLUMNS = (
    "id",
    # 700 keys, every 11th row null
    "if(id % 11 = 0, null, concat('key-', lpad(cast(id % 700 as string), 4, '0'))) as key",
    # values equal in length, first 32 and last 8 bytes (one hash), apart in the middle; many empty
    "if(id % 4 = 0, concat(repeat('a', 32), cast(id % 3 as string), repeat('z', 8)), '') as twin",
    "cast(id * 7919 as string) as ident",                  # every value distinct
    "repeat(cast(id % 5 as string), 100) as payload",      # long values: never looked up
    # 0-16 bytes, told apart by one byte at every position (the words a short value is known by)
    "concat(repeat('x', id % 9), cast(id % 2 as string), repeat('y', id % 8)) as short",
    "repeat('w', id % 17) as widths",
)


@pytest.fixture(scope="module")
def journal(spark, tmp_path_factory):
    if connector.jar_unavailable():
        pytest.skip(f"no JVM connector here: {connector.jar_unavailable()}")
    path = str(tmp_path_factory.mktemp("strings") / "journal")
    spark.range(0, ROWS, numPartitions=2).selectExpr(*COLUMNS).write.format("sparkjournal") \
        .mode("append").save(path)
    frame = spark.read.format("sparkjournal").load(path)
    if "sparkjournal" not in frame._jdf.queryExecution().executedPlan().toString():
        pytest.skip("the test session reads format('sparkjournal') through the Python source")
    return path


def _expected(spark, *columns):
    return sorted(spark.range(0, ROWS, numPartitions=2).selectExpr(*COLUMNS).select(*columns).collect())


def _read(spark, path, *columns):
    """(sorted rows, the scan's sharedStringValues) of reading ``columns``."""
    frame = spark.read.format("sparkjournal").load(path).select(*columns)
    rows = sorted(frame.collect())
    return rows, _scan_metric(frame._jdf.queryExecution().executedPlan(), "sharedStringValues")


def _scan_metric(plan, name):
    """The metric summed over the plan's sparkjournal scans (through adaptive
    execution's stages)."""
    kind = plan.getClass().getSimpleName()
    if kind == "AdaptiveSparkPlanExec":
        return _scan_metric(plan.executedPlan(), name)
    if kind.endswith("QueryStageExec"):
        return _scan_metric(plan.plan(), name)
    if kind == "BatchScanExec":
        return plan.metrics().apply(name).value()
    children = plan.children()
    return sum(_scan_metric(children.apply(i), name) for i in range(children.size()))


def test_every_string_column_reads_back_what_spark_wrote(spark, journal):
    names = ("id", "key", "twin", "ident", "payload")
    rows, shared = _read(spark, journal, *names)
    assert rows == _expected(spark, *names)
    keys = sum(1 for row in rows if row.key is not None)
    assert shared == keys + ROWS, "key and twin shared; ident and payload read from memory"


def test_short_keys_are_shared_and_nulls_stay_null(spark, journal):
    rows, shared = _read(spark, journal, "id", "key")
    assert rows == _expected(spark, "id", "key")
    nulls = sum(1 for row in rows if row.key is None)
    assert nulls == len(range(0, ROWS, 11)) and shared == ROWS - nulls


def test_values_that_hash_alike_stay_apart(spark, journal):
    rows, shared = _read(spark, journal, "id", "twin")
    assert rows == _expected(spark, "id", "twin")
    assert len({row.twin for row in rows}) == 4 and shared == ROWS


@pytest.mark.parametrize("column", ["ident", "payload"])
def test_distinct_or_long_values_are_read_from_the_records(spark, journal, column):
    rows, shared = _read(spark, journal, "id", column)
    assert rows == _expected(spark, "id", column)
    assert shared == 0


def test_aggregation_on_shared_keys_counts_every_row(spark, journal):
    from pyspark.sql import functions as F
    frame = spark.read.format("sparkjournal").load(journal).groupBy("key").agg(F.count("id").alias("n"))
    def by_key(row):
        return (row.key is not None, row.key or "")
    got = sorted(frame.collect(), key=by_key)
    want = sorted(spark.range(0, ROWS, numPartitions=2).selectExpr(*COLUMNS).groupBy("key")
                  .agg(F.count("id").alias("n")).collect(), key=by_key)
    assert got == want and len(got) == 701
    shared = _scan_metric(frame._jdf.queryExecution().executedPlan(), "sharedStringValues")
    assert shared == ROWS - len(range(0, ROWS, 11))


@pytest.mark.parametrize("column, distinct", [("short", 72), ("widths", 17)])   # 72: (id % 9, id % 8)
def test_short_values_apart_by_one_byte_or_by_length_stay_apart(spark, journal, column, distinct):
    rows, shared = _read(spark, journal, "id", column)
    assert rows == _expected(spark, "id", column)
    assert len({getattr(row, column) for row in rows}) == distinct and shared == ROWS
