"""``sparkjournal bench read``: reading a journal back, side by side in one run
with what a Spark user would read instead, on the same events and disk.

Events: (long id, timestamp, 16-character key of 1,000 distinct values,
200-character payload, double amount).

* Large batches (``rows`` events written in one batch write, two tasks):
  the journal (``spark.read.format("sparkjournal")``); the same events as
  parquet written by Spark; and the **Python floor**: a minimal Python data
  source that memory-maps Arrow IPC files of the same events and yields their
  batches - no Python reader can beat it (Spark turns its Arrow into rows and
  cannot prune columns). Measured: a full scan (the noop sink) and
  ``groupBy(key).agg(sum(amount))``, the journal read three ways: by default
  (the events and six metadata columns), with a user-specified schema of the
  event columns (the floor's columns: the issue's target), and, for the
  aggregation, with the schema pruned to (key, amount) - Spark's idiom for a
  source that cannot prune, which the floor does not use. The default read is
  also measured against the floor over IPC files of that read's own 11
  columns, so that both hand Spark the same columns.
* Many small batches: a stream of ``small`` micro-batches of 1k rows landed
  by JournalSink and by Spark's exactly-once parquet sink from the same source;
  then the same aggregation over each.
* The Python worker's share of the event-column read, without Spark
  (bench_worker.py): the journal against the floor, and what smaller batches
  and the CRC checks each cost.
* Streaming catch-up: ``readStream`` with availableNow over the large backlog,
  the journal against Spark's file stream source over the parquet copy: whole
  queries, and their micro-batches alone (Spark's triggerExecution).

Every measurement runs in ``--repeats`` interleaved rounds (default
``REPEATS``) after a warm-up; values are medians, and each ratio is the median
of the per-round ratios (bench_support.Rounds).

A benchmark, never a test: nothing asserts a time.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import statistics
import time

import pyarrow as pa

from ..events.lane_scan import scan, spark_facing
from ..events.pruning import Predicate
from ..events.read_columns import full_schema
from ..spark.datasource import JournalDataSource
from ..spark.page_read import plan_pages
from ..spark.reader import JournalReader
from ..spark.tool_session import tool_session
from .bench_support import REPORTED, BenchResult, Rounds, bench_log, print_report, work_folder
from .bench_worker import ipc_batches, worker_results, write_batches

REPEATS = 7
FULL = {"rows": 2_000_000, "small": 1_000}
QUICK = {"rows": 200_000, "small": 60}
FLOOR_SOURCE = "sj_bench_ipc"


def _floor_source():
    """The Python floor: yields memory-mapped Arrow IPC batches, nothing else."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class IpcReader(DataSourceReader):
        def __init__(self, folder):
            self.folder = folder

        def partitions(self):
            return [InputPartition(os.path.join(self.folder, name))
                    for name in sorted(os.listdir(self.folder))]

        def read(self, partition):
            yield from ipc_batches(partition.value)

    class IpcSource(DataSource):
        @classmethod
        def name(cls):
            return FLOOR_SOURCE

        def schema(self):
            return self.options["schema"]

        def reader(self, schema):
            return IpcReader(self.options["path"])

    return IpcSource


def _events(frame):
    from pyspark.sql import functions as F
    return frame.select(
        F.col("id"), F.timestamp_seconds(F.col("id")).alias("ts"),
        F.substring(F.sha2((F.col("id") % 1000).cast("string"), 256), 1, 16).alias("key"),
        F.repeat(F.lit("p"), 200).alias("payload"),
        (F.col("id") % 1000 / 10.0).cast("double").alias("amount"))


def _ipc_writer(folder: str):
    def write(batches):
        import uuid
        path = os.path.join(folder, f"{uuid.uuid4().hex}.arrow")
        # as the floor source declares it: zoned times in UTC, every column nullable
        declared = (batch.cast(pa.schema([f.with_nullable(True)
                                          for f in spark_facing(batch.schema)]))
                    for batch in batches)
        rows = write_batches(declared, lambda schema: pa.ipc.new_file(path, schema))
        yield pa.RecordBatch.from_pylist([{"rows": rows}])
    return write


def journal_as_ipc(journal: str, folder: str,
                   columns: list[str] | None) -> tuple[list[str], int]:
    """Writes the journal's live tail (every visible event not in a page file:
    all of them in a journal never paged), only ``columns`` (None: the default
    read's, events and metadata), as one Arrow IPC file per lane in ``folder``,
    typed as the floor source declares them (every column nullable); (the page
    files' paths, tail rows)."""
    read_options, log_uri, stored = JournalDataSource({"path": journal})._read_setup()
    lanes = JournalReader(journal, log_uri, stored, read_options.journal).partitions()
    pages = plan_pages(lanes, Predicate(), read_options.journal)
    every = full_schema(stored)
    wanted = pa.schema([every.field(name).with_nullable(True)
                        for name in (every.names if columns is None else columns)])
    os.makedirs(folder)
    rows = 0
    for index, part in enumerate(lanes):
        elsewhere = tuple(pages[part.lane].names) if part.lane in pages else ()
        lane_slice = dataclasses.replace(part.slice, pages_elsewhere=elsewhere)
        with pa.ipc.new_file(os.path.join(folder, f"tail-{index:03d}.arrow"), wanted) as out:
            for batch in scan(lane_slice, stored, read_options.journal, columns=wanted):
                out.write_batch(batch.cast(wanted))
                rows += batch.num_rows
    return [path for lane_pages in pages.values() for path in lane_pages.paths], rows


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _scan(frame):
    return lambda: frame.write.format("noop").mode("overwrite").save()


def _aggregate(frame):
    from pyspark.sql import functions as F
    return lambda: frame.groupBy("key").agg(F.sum("amount")).collect()


def _rounds(contenders: dict, rows, log, label: str, repeats: int = REPEATS) -> Rounds:
    """Rows/s of ``repeats`` interleaved rounds of {name: action}, after one
    warm-up run each; ``rows``: the rows each reads, one number or {name: rows}."""
    rows = rows if isinstance(rows, dict) else dict.fromkeys(contenders, rows)
    for action in contenders.values():
        action()
    rounds = Rounds.run({name: (lambda action=action, n=rows[name]: n / _timed(action))
                         for name, action in contenders.items()}, repeats, log, f"{label} (rows/s)")
    log(f"{label}: " + ", ".join(f"{n} {v:,.0f} rows/s" for n, v in rounds.medians().items()))
    return rounds


def _aggregate_vs(frames: dict, rows, log, label: str, title: str, target: float,
                  note: str, repeats: int = REPEATS) -> BenchResult:
    """The aggregation over {ours: frame, baseline: frame}: ours against the baseline."""
    ours, baseline = list(frames)
    rounds = _rounds({n: _aggregate(f) for n, f in frames.items()}, rows, log, label, repeats)
    return rounds.result(title, ours, baseline, "rows/s", target, detail=note)


READS = {"journal": "with metadata columns", "journal events": "event columns only (user schema)",
         "journal (key, amount)": "schema pruned to (key, amount)"}
FLOOR, WIDE_FLOOR = "python floor", "python floor, 11 columns"


def _large_batches(spark, journal: str, parquet: str, ipc: str, wide_ipc: str, ddl: str,
                   rows: int, log, repeats: int) -> list[BenchResult]:
    """The large-batch rows: each journal read against the floor, interleaved
    with parquet and the floors in one run per query."""
    def load(schema=None):
        reader = spark.read.format("sparkjournal")
        return (reader.schema(schema) if schema else reader).load(journal)
    default = load()
    wide_ddl = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in default.schema.fields)
    frames = {"journal": default, "journal events": load(ddl),
              "journal (key, amount)": load("key string, amount double"),
              "parquet": spark.read.parquet(parquet),
              FLOOR: spark.read.format(FLOOR_SOURCE).option("schema", ddl).load(ipc),
              WIDE_FLOOR: spark.read.format(FLOOR_SOURCE).option("schema", wide_ddl).load(wide_ipc)}
    results = []
    for query, make in (("full scan", _scan), ("groupBy(key).agg(sum)", _aggregate)):
        names = [n for n in frames if query == "groupBy(key).agg(sum)" or "amount" not in n]
        rounds = _rounds({n: make(frames[n]) for n in names}, rows, log, query, repeats)
        for name in (n for n in names if n.startswith("journal")):
            pruned = "amount" in name
            note = ("the floor cannot prune: it converts all 5 columns; " if pruned else
                    "the floor's 5 columns; " if name == "journal events" else "")
            versus = f"parquet {rounds.median('parquet'):,.0f} rows/s (journal/parquet " \
                     f"{rounds.paired(name, 'parquet'):.2f})"
            results.append(rounds.result(
                f"read {query}, {rows:,} events, {READS[name]}, vs python floor", name, FLOOR,
                "rows/s", 0.9, detail=f"{note}{versus}"))
            if name == "journal":
                results.append(rounds.result(
                    f"read {query}, {rows:,} events, {READS[name]}, vs python floor of the same "
                    f"11 columns", name, WIDE_FLOOR, "rows/s", 0.9, detail=(
                        "the floor source over IPC files of this read's own output (events and "
                        "metadata), so both hand Spark the same columns")))
            if pruned:
                results.append(rounds.result(
                    f"read {query}, {rows:,} events, {READS[name]}, vs parquet (which prunes "
                    f"too)", name, "parquet", "rows/s", 0.0, REPORTED))
    return results


def _worker_share(journal: str, ipc: str, repeats: int, log) -> list[BenchResult]:
    """The Python worker's share of the event-column read, without Spark
    (bench_worker.py): the journal's first lane against the first floor file."""
    read_options, log_uri, stored = JournalDataSource({"path": journal})._read_setup()
    lane = JournalReader(journal, log_uri, stored, read_options.journal).partitions()[0].slice
    columns = pa.schema([field.with_nullable(True) for field in stored])   # as the floor's
    records = [batch.num_rows for batch in scan(lane, stored, read_options.journal,
                                                columns=columns)]
    floor_file = os.path.join(ipc, sorted(os.listdir(ipc))[0])
    return worker_results(lane, stored, read_options.journal, columns, floor_file,
                          round(sum(records) / max(len(records), 1)), repeats, log)


def _land_small_stream(spark, work: str, batches: int) -> tuple[str, str]:
    """One rate-micro-batch stream of 1k-row batches landed twice, by JournalSink
    and by the parquet sink (two queries over the same deterministic source)."""
    from ..spark.sink import JournalSink
    journal, parquet = os.path.join(work, "small-journal"), os.path.join(work, "small-parquet")
    for name in ("journal", "parquet"):
        source = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1000).load()
        writer = (_events(source.withColumnRenamed("value", "id")).writeStream
                  .trigger(processingTime="0 seconds")
                  .option("checkpointLocation", os.path.join(work, f"small-{name}-checkpoint")))
        if name == "journal":
            writer = writer.foreachBatch(JournalSink(journal))
        else:
            writer = writer.format("parquet").option("path", parquet)
        query = writer.start()
        try:
            # recentProgress keeps only the last 100 updates: count by batch id.
            while query.isActive and _last_batch_id(query) + 1 < batches:
                query.awaitTermination(0.2)
        finally:
            query.stop()
    return journal, parquet


def _last_batch_id(query) -> int:
    progress = query.lastProgress
    return progress["batchId"] if progress and progress.get("numInputRows") else -1


def _catch_up(spark, reader, work: str, name: str, triggers: list) -> callable:
    """One availableNow query over the whole backlog into the noop sink;
    appends the seconds its micro-batches took (Spark's triggerExecution) to
    ``triggers``: the rest of the wall time is starting and stopping the query."""
    def run():
        checkpoint = os.path.join(work, f"catch-up-{name}-{time.monotonic_ns()}")
        query = (reader().writeStream.format("noop").trigger(availableNow=True)
                 .option("checkpointLocation", checkpoint).start())
        query.awaitTermination()
        triggers.append(sum(p["durationMs"].get("triggerExecution", 0)
                            for p in query.recentProgress) / 1e3)
        shutil.rmtree(checkpoint, ignore_errors=True)
    return run


def _catch_up_results(spark, journal: str, parquet: str, schema, rows: int, work: str, log,
                      repeats: int) -> list[BenchResult]:
    triggers = {"journal": [], "file stream": []}
    catch = {"journal": _catch_up(spark, lambda: spark.readStream.format("sparkjournal")
                                  .load(journal), work, "journal", triggers["journal"]),
             "file stream": _catch_up(spark, lambda: spark.readStream.schema(schema)
                                      .parquet(parquet), work, "parquet", triggers["file stream"])}
    whole = _rounds(catch, rows, log, "streaming catch-up", repeats)
    # the warm-up's micro-batches are left out, as its wall time is
    batches = Rounds({n: [rows / seconds for seconds in t[1:]] for n, t in triggers.items()})
    started = {n: statistics.median(rows / rate - seconds for rate, seconds
                                    in zip(whole.values[n], triggers[n][1:])) for n in triggers}
    return [whole.result(f"stream catch-up over {rows:,} events vs file stream source", "journal",
                         "file stream", "rows/s", 0.0, REPORTED,
                         f"query start and stop: journal {started['journal']:.2f} s, file stream "
                         f"{started['file stream']:.2f} s (a Python source's start includes Spark "
                         f"launching its Python streaming source runner)"),
            batches.result(f"stream catch-up over {rows:,} events, the micro-batch alone "
                           f"(triggerExecution), vs file stream source", "journal", "file stream",
                           "rows/s", 0.0, REPORTED)]


def run(args) -> int:
    logging.getLogger("py4j").setLevel(logging.CRITICAL)
    sizes = QUICK if args.quick else FULL
    work = work_folder(args.dir, "sparkjournal-bench-read-", 0)
    log = bench_log
    spark = tool_session(args.master, "sparkjournal-bench-read")
    spark.dataSource.register(_floor_source())
    results = []
    try:
        rows = sizes["rows"]
        events = _events(spark.range(0, rows, numPartitions=2))
        journal, parquet, ipc, wide_ipc = (os.path.join(work, n)
                                           for n in ("journal", "parquet", "ipc", "wide-ipc"))
        os.makedirs(ipc)
        events.write.format("sparkjournal").mode("append").save(journal)
        events.write.parquet(parquet)
        events.mapInArrow(_ipc_writer(ipc), "rows long").collect()
        journal_as_ipc(journal, wide_ipc, None)
        log(f"landed {rows:,} events three ways under {work}, and the journal's default read "
            f"as IPC for the 11-column floor")
        ddl = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in events.schema.fields)
        results += _large_batches(spark, journal, parquet, ipc, wide_ipc, ddl, rows, log,
                                  args.repeats)
        results += _worker_share(journal, ipc, args.repeats, log)
        results += _catch_up_results(spark, journal, parquet, events.schema, rows, work, log,
                                     args.repeats)
        small = sizes["small"]
        started = time.monotonic()
        small_journal, small_parquet = _land_small_stream(spark, work, small)
        log(f"landed {small} micro-batches of 1k rows twice ({time.monotonic() - started:.0f} s)")
        small_frames = {"journal": spark.read.format("sparkjournal").load(small_journal),
                        "parquet sink": spark.read.parquet(small_parquet)}
        counts = {n: f.count() for n, f in small_frames.items()}
        results.append(_aggregate_vs(
            small_frames, counts, log, "aggregate after small batches",
            f"read after {small} micro-batches of 1k: agg vs parquet sink output", 1.5,
            f"rows: journal {counts['journal']:,}, parquet sink {counts['parquet sink']:,}",
            args.repeats))
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    print_report(results, args.json)
    return 0
