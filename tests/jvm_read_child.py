"""A driver for tests/test_jvm_reader.py: one local Spark session with the JVM
connector on its classpath (jvm_build's jar through ``spark.jars``), and the
Python data source registered beside it as ``sparkjournal-python``. Each
scenario writes a real journal with the real sink, then reads it through both
and prints one JSON line: {"name", "jvm", "python"}, each the sorted rows (as
strings) or {"error": message}.

    python tests/jvm_read_child.py WORK_DIR
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.functions import pandas_udf

from lane_surgery import flip
from sparkjournal import JournalSink
from sparkjournal.config import load_config
from sparkjournal.events.commit_log import CommitLog, default_log_uri
from sparkjournal.events.page_records import live_pages
from sparkjournal.events.visible_events import node_lanes
from sparkjournal.journal.journal import Journal
from sparkjournal.journal.lock import LaneLock
from sparkjournal.journal.lanes import list_lanes
from sparkjournal.spark import jvm_build
from sparkjournal.spark.datasource import JournalDataSource
from sparkjournal.maintenance.paging import page_lane
from sparkjournal.spark.lane_writer import WritePlan, write_task

PAGED = {"fileSize": "64k", "bufferSize": "16k", "pageSizeBytes": "40k"}
# the paged journal's other columns: a payload, and nested ones (deleted rows of a page are a view)
NESTED = ("repeat('p', 60) as payload", "named_struct('n', id % 3, 's', key) as info",
          "if(id % 5 = 0, null, array(id, id + 1)) as pair")

# (column, value): each flat Spark type, read by the JVM connector without Arrow's accessors
FLAT_TYPES = (("flag", "id % 2 = 0"), ("tiny", "cast(id % 100 as tinyint)"),
              ("small", "cast(id % 300 as smallint)"), ("n", "cast(id * 3 as int)"),
              ("f", "cast(id / 4 as float)"), ("x", "id / 8.0d"),
              ("day", "date_add(date'2026-01-01', cast(id as int))"),
              ("at", "timestamp_micros(1700000000000000 + id * 1001)"),
              ("local", "cast(timestamp_micros(1700000000000000 + id) as timestamp_ntz)"),
              ("text", "repeat(cast(id as string), cast(id % 4 as int))"), ("blob", "unhex(hex(id * 17))"))


class PythonReader(JournalDataSource):
    @classmethod
    def name(cls) -> str:
        return "sparkjournal-python"


def rows_of(read) -> object:
    try:
        return sorted(json.dumps([str(v) for v in row], ensure_ascii=True) for row in read().collect())
    except Exception as error:                                 # noqa: BLE001 - reported to the test
        return {"error": str(error)[:20000]}


def both(spark, name: str, query) -> None:
    """``query(reader)`` -> DataFrame, run with each format."""
    result = {"name": name}
    for label, fmt in (("jvm", "sparkjournal"), ("python", "sparkjournal-python")):
        result[label] = rows_of(lambda: query(spark.read.format(fmt)))
    print(json.dumps(result), flush=True)


def frame(spark, start, count):
    return spark.range(start, start + count, numPartitions=2).selectExpr("id", "cast(id as string) as key")


def main(work: str) -> None:
    spark = (SparkSession.builder.master("local[2]").config("spark.jars", jvm_build.jvm_jar())
             .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
             .getOrCreate())
    spark.dataSource.register(PythonReader)
    path = os.path.join(work, "two-batches")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0)
    sink(frame(spark, 0, 600), 0)
    sink(frame(spark, 600, 400), 1)
    both(spark, "full_read", lambda r: r.load(path))
    both(spark, "pruned_to_one_column", lambda r: r.load(path).select("key"))
    both(spark, "filter_on_batch_id", lambda r: r.load(path).filter("_batch_id = 1"))
    both(spark, "filter_on_event_range", lambda r: r.load(path).filter("id > 500 and id < 700"))
    both(spark, "user_schema", lambda r: r.schema("key string, _record_id long, _row int").load(path))
    both(spark, "starting_batch_id", lambda r: r.option("startingBatchId", "1").load(path))
    both(spark, "unknown_column", lambda r: r.schema("nope string").load(path))
    both(spark, "unknown_option", lambda r: r.option("fileSiz", "1m").load(path))
    both(spark, "aggregation", lambda r: r.load(path).groupBy("_batch_id").sum("id"))
    # An Arrow-optimized Python UDF takes the scan's columnar batches as they are.
    doubled = pandas_udf(lambda ids: ids * 2, "long")
    both(spark, "arrow_python_udf", lambda r: r.load(path).select("id", "_host", doubled("id")))

    # every flat type the reader hands Spark straight from the mapped record, with nulls
    path = os.path.join(work, "flat-types")
    JournalSink(path, txnAppId="q", smallBatchRows=0)(spark.range(0, 300, numPartitions=2).selectExpr(
        "id", *(f"if(id % 7 = 3, null, {value}) as {name}" for name, value in FLAT_TYPES)), 0)
    both(spark, "every_flat_type", lambda r: r.load(path))
    both(spark, "every_flat_type_filtered", lambda r: r.load(path).filter("small > 40 and flag"))

    path = os.path.join(work, "undecided")
    log_uri = os.path.join(path, "_commits")
    JournalSink(path, txnAppId="q", smallBatchRows=0)(frame(spark, 0, 10), 0)
    table = pa.table({"id": pa.array(range(100, 110), pa.int64()),
                      "key": [str(i) for i in range(100, 110)]})
    message = write_task(iter(table.to_batches()), WritePlan(path, (), log_uri, "q", 1))
    both(spark, "undecided_transaction", lambda r: r.load(path))
    CommitLog(log_uri).record("q", 1, [message.decided()])
    both(spark, "decided_transaction", lambda r: r.load(path))

    path = os.path.join(work, "evolved")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0)
    sink(frame(spark, 0, 5), 0)
    sink(frame(spark, 5, 5).selectExpr("*", "if(id > 6, 'late', null) as note"), 1)
    both(spark, "column_added_later", lambda r: r.load(path))

    path = os.path.join(work, "deleted")
    JournalSink(path, txnAppId="q", smallBatchRows=0)(frame(spark, 0, 300), 0)
    import sparkjournal
    sparkjournal.delete(spark, path, "id % 7 = 0 or id < 20")
    both(spark, "deleted_rows", lambda r: r.load(path))

    path = os.path.join(work, "corrupt")
    sink = JournalSink(path, txnAppId="q", fileSize="64k", bufferSize="16k", smallBatchRows=0)
    for batch in range(3):
        sink(frame(spark, batch * 4000, 4000).selectExpr("*", "repeat('x', 100) as payload"), batch)
    lane = os.path.join(path, list_lanes(path)[0])
    first = os.path.join(lane, sorted(f for f in os.listdir(lane) if f.endswith(".sjd"))[0])
    flip(first, 4096 + 200)                     # the first record's body
    both(spark, "corrupt_record", lambda r: r.load(path).select("id"))
    both(spark, "skip_corrupt", lambda r: r.option("skipCorrupt", "true").load(path).select("id"))

    paged(spark, os.path.join(work, "paged"))
    spark.stop()


def wait_free(lanes, timeout: float = 60.0) -> None:
    """Until no process holds each lane (Spark workers let a lane writer go after laneIdleTimeout)."""
    deadline = time.monotonic() + timeout
    for lane in lanes:
        lock = LaneLock(lane)
        while not lock.try_acquire():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{lane} stayed held")
            time.sleep(0.05)
        lock.release()


def paged(spark, path: str) -> None:
    """A journal whose lanes hold page files (the project's paging, twice: two
    pages a lane), read whole, pruned, filtered, after deletes, with events
    written after paging (a column the pages predate), and with a page changed
    (read whole: fails; from a batch the page does not hold: reads) and then removed."""
    import sparkjournal
    sink = JournalSink(path, txnAppId="q", laneIdleTimeout="200ms", smallBatchRows=0, **PAGED)
    for batch in range(3):
        sink(frame(spark, batch * 1500, 1500).selectExpr("*", *NESTED), batch)
    lanes = list(node_lanes(path))
    wait_free([lane for lane, _node in lanes])
    config = load_config(PAGED)
    for _round in range(2):
        for lane, node in lanes:
            page_lane(lane, node, default_log_uri(path), config, force=True)
    counts = []
    for lane, _node in lanes:
        with Journal.read(lane) as snapshot:
            counts.append(len(live_pages(snapshot)))
    assert max(counts) >= 2, f"paging made {counts} pages a lane"
    both(spark, "paged_full_read", lambda r: r.load(path))
    both(spark, "paged_pruned_to_one_column", lambda r: r.load(path).select("key"))
    both(spark, "paged_count", lambda r: r.load(path).groupBy().count())
    both(spark, "paged_filter_on_batch_id", lambda r: r.load(path).filter("_batch_id = 2"))
    sparkjournal.delete(spark, path, "id % 7 = 0 or id < 150", **PAGED)
    both(spark, "paged_deleted_rows", lambda r: r.load(path).select("id", "key", "info", "pair", "_record_id",
                                                                  "_row"))
    sink(frame(spark, 4500, 300).selectExpr("*", *NESTED, "if(id > 4600, 'late', null) as note"), 3)
    both(spark, "paged_and_live_tail", lambda r: r.load(path).drop("payload"))
    lane = next(lane for (lane, _node), count in zip(lanes, counts) if count)
    with Journal.read(lane) as snapshot:
        page_file = live_pages(snapshot)[0].path(lane)
    with open(page_file, "ab") as handle:
        handle.write(b"x")
    both(spark, "paged_file_changed", lambda r: r.load(path).select("id"))
    # pruned by its PAGE record's batch range (the starting point prunes in both readers; a
    # filter only where Python's filter pushdown is on), the changed page is not opened
    both(spark, "paged_file_changed_but_pruned",
         lambda r: r.option("startingBatchId", "3").load(path).select("id"))
    os.remove(page_file)               # as if dropped after the snapshot (the JVM holds no files.lock)
    both(spark, "paged_file_missing", lambda r: r.load(path).select("id"))


if __name__ == "__main__":
    shutil.rmtree(sys.argv[1], ignore_errors=True)
    os.makedirs(sys.argv[1])
    main(sys.argv[1])
