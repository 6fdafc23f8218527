"""Reading only some columns: a user-specified schema on the batch and stream
readers (``.schema("key string, id bigint")``) and ``sparkjournal.read(...,
columns=)`` yield exactly those columns, with the same rows as the full read;
an unknown column, another type or NOT NULL on a nullable column fails naming
the column and what the journal has; a filter on a column outside the user
schema is Spark's analysis error."""
from __future__ import annotations

import os

import pytest

pytest.importorskip("pyspark")

from pyspark.errors import AnalysisException, IllegalArgumentException  # noqa: E402

import sparkjournal  # noqa: E402
from sparkjournal import JournalSink  # noqa: E402
from sparkjournal.config import load_config  # noqa: E402
from sparkjournal.events.commit_log import default_log_uri  # noqa: E402
from sparkjournal.events.read_columns import UnknownColumnError  # noqa: E402
from sparkjournal.events.visible_events import node_lanes  # noqa: E402
from sparkjournal.maintenance.paging import page_lane  # noqa: E402

PUSHDOWN = "spark.sql.python.filterPushdown.enabled"
SMALL = {"fileSize": "64k", "bufferSize": "16k", "pageSizeBytes": "40k"}


def events(spark, start, count):
    return spark.range(start, start + count, numPartitions=2).selectExpr(
        "id", "cast(id as string) as key", "timestamp_seconds(id) as ts", "cast(id as double) / 7 as v")


@pytest.fixture(scope="module")
def journal(spark, tmp_path_factory):
    """Three batches; the third adds a nullable column ``note``."""
    path = str(tmp_path_factory.mktemp("columns") / "journal")
    sink = JournalSink(path, txnAppId="q", laneIdleTimeout="200ms", **SMALL)
    sink(events(spark, 0, 700), 0)
    sink(events(spark, 700, 700), 1)
    sink(events(spark, 1400, 600).selectExpr("*", "if(id % 2 = 0, 'even', null) as note"), 2)
    return path


def full(spark, path):
    return spark.read.format("sparkjournal").load(path)


def rows(frame) -> list[tuple]:
    return sorted((tuple(row) for row in frame.collect()), key=repr)


def refusal(spark, path, schema: str) -> str:
    """The planning error of a read with the user schema ``schema``."""
    # AnalysisException from the Python source, IllegalArgumentException from the JVM one
    with pytest.raises((AnalysisException, IllegalArgumentException)) as excinfo:
        spark.read.format("sparkjournal").schema(schema).load(path).collect()
    return str(excinfo.value)


def test_user_schema_prunes_to_asked_columns_in_the_order_asked(spark, journal):
    pruned = spark.read.format("sparkjournal").schema("note string, key string, id bigint") \
        .load(journal)
    assert pruned.columns == ["note", "key", "id"]
    assert rows(pruned) == rows(full(spark, journal).select("note", "key", "id"))
    assert sum(1 for row in pruned.collect() if row.note is None) == 1400 + 300   # older + odd


def test_user_schema_of_metadata_columns_only_equals_the_full_reads_metadata(spark, journal):
    names = ["_record_id", "_row", "_lane", "_batch_id", "_commit_time", "_host"]
    pruned = spark.read.format("sparkjournal").schema(
        "_record_id bigint, _row int, _lane string, _batch_id bigint, _commit_time timestamp, "
        "_host string").load(journal)
    assert pruned.columns == names
    found = rows(pruned)
    assert len(found) == 2000 and found == rows(full(spark, journal).select(*names))
    assert {row._batch_id for row in pruned.collect()} == {0, 1, 2}


def test_user_schema_aggregation_equals_the_unpruned_aggregation(spark, journal):
    pruned = spark.read.format("sparkjournal").schema("key string, v double").load(journal)
    assert rows(pruned.groupBy("key").sum("v")) == rows(full(spark, journal).groupBy("key").sum("v"))


def test_unknown_column_fails_naming_it_and_the_journals_columns(spark, journal):
    message = refusal(spark, journal, "id bigint, nope string")
    assert "column nope is not in this journal" in message
    assert "id:bigint,key:string,ts:timestamp,v:double" in message
    assert "_record_id:bigint" in message


def test_column_in_another_case_is_refused_with_the_right_spelling_suggested(spark, journal):
    assert "column KEY is not in this journal (did you mean key?" in refusal(spark, journal,
                                                                              "KEY string")


def test_column_asked_with_another_type_fails_naming_both_types(spark, journal):
    assert "column id is bigint in this journal, not int" in refusal(spark, journal, "id int")


def test_not_null_on_a_nullable_column_is_refused(spark, journal):
    assert "column note is nullable in this journal" in refusal(spark, journal,
                                                                "note string not null")


def test_filter_on_a_column_outside_the_user_schema_is_an_analysis_error(spark, journal):
    spark.conf.set(PUSHDOWN, "true")
    try:
        pruned = spark.read.format("sparkjournal").schema("id bigint").load(journal)
        with pytest.raises(AnalysisException) as excinfo:
            pruned.filter("_batch_id = 1").collect()
        assert "_batch_id" in str(excinfo.value) and "UNRESOLVED_COLUMN" in str(excinfo.value)
        # A pushed filter on a column of the user schema prunes as in the full read.
        kept = spark.read.format("sparkjournal").schema("id bigint, _batch_id bigint") \
            .load(journal).filter("_batch_id = 1 and id > 1000")
        assert sorted(row.id for row in kept.collect()) == list(range(1001, 1400))
    finally:
        spark.conf.unset(PUSHDOWN)


def test_starting_batch_id_applies_to_a_user_schema_without_batch_id(spark, journal):
    later = spark.read.format("sparkjournal").schema("id bigint").option("startingBatchId", 2) \
        .load(journal)
    assert sorted(row.id for row in later.collect()) == list(range(1400, 2000))


def test_stream_read_with_a_user_schema_yields_the_asked_columns(spark, journal, tmp_path):
    query = (spark.readStream.format("sparkjournal").schema("id bigint, _batch_id bigint")
             .load(journal).writeStream.format("parquet").option("path", str(tmp_path / "out"))
             .option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    query.awaitTermination(120)
    assert query.exception() is None
    landed = spark.read.parquet(str(tmp_path / "out"))
    assert landed.columns == ["id", "_batch_id"]
    assert rows(landed) == rows(full(spark, journal).select("id", "_batch_id"))


def test_locality_read_with_columns_equals_the_format_read_of_those_columns(spark, journal):
    located = sparkjournal.read(spark, journal, columns=["_lane", "v", "id"])
    assert located.columns == ["_lane", "v", "id"]
    assert rows(located) == rows(full(spark, journal).select("_lane", "v", "id"))
    with pytest.raises(UnknownColumnError, match="column vv is not in this journal"):
        sparkjournal.read(spark, journal, columns=["vv"])


def test_paged_events_read_with_columns_as_before(spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", laneIdleTimeout="200ms", **SMALL)
    for batch in range(3):
        sink(events(spark, batch * 1000, 1000), batch)
    lanes = list(node_lanes(path))
    wait_lanes_free([lane for lane, _node in lanes])
    asked = "_row int, key string, _record_id bigint"
    before = rows(spark.read.format("sparkjournal").schema(asked).load(path))
    before_located = rows(sparkjournal.read(spark, path, columns=["_row", "key", "_record_id"]))
    config = load_config(SMALL)
    reports = [page_lane(lane, node, default_log_uri(path), config, force=True)
               for lane, node in lanes]
    assert any(report.paged for report in reports)
    assert any(os.listdir(os.path.join(lane, "pages")) for lane, _node in lanes
               if os.path.isdir(os.path.join(lane, "pages")))
    assert len(before) == 3000 and before_located == before
    assert rows(spark.read.format("sparkjournal").schema(asked).load(path)) == before
    assert rows(sparkjournal.read(spark, path, columns=["_row", "key", "_record_id"])) == before
