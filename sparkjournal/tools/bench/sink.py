"""``sparkjournal bench sink``: the exactly-once sink against Spark's own sinks,
side by side in one run, on the same micro-batches, on the same disk.

Every contender consumes the same stream - rate-micro-batch events of (long id,
timestamp, 16-character key, 200-character payload, double) - in its own
streaming query with its own checkpoint:

* ``journal``      JournalSink (foreachBatch, two-phase commit into lanes),
                   default options: its writer "auto" has executor tasks write
                   from the JVM, no Python worker, where the connector is built;
* ``journal_python`` the same with ``writer="python"``: tasks write in Python
                   workers (mapInArrow);
* ``parquet``      Spark's exactly-once file sink (writeStream.format("parquet"));
* ``noop``         a foreachBatch that only runs the batch (Spark's floor);
* ``arrow_floor``  a foreachBatch whose mapInArrow only counts rows: the cost of
                   handing rows to Python, which no Python sink can beat;
* ``journal_driver`` (small batches only) JournalSink with smallBatchRows: the
                   driver writes the batch, no Python job on the executors;
* ``format``       (large batches only) writeStream.format("sparkjournal"): the
                   JVM connector's own DataSource V2 write, no Python at all;
* ``format_python`` (large batches only) the same with ``writer="python"``: the
                   Python data source's writer.

Rows/s is the sum of numInputRows over the sum of triggerExecution times of the
batches after the first (warm-up), from each query's progress reports. Runs are
interleaved in rounds, each round starting one contender further on (journal,
parquet, noop, floor; parquet, noop, floor, journal; ...); values are medians
and ratios the medians of per-round ratios (report.Rounds). All
queries use the same checkpoint file manager (the one without a process per
file). A benchmark, never a test: nothing here asserts a time.
"""
from __future__ import annotations

import logging
import os
import shutil
import statistics
import time

from ...spark.tool_session import tool_session
from .report import Rounds, print_report
from .support import bench_log, work_folder

REPEATS = 5
FULL = {1_000: 25, 100_000: 12, 1_000_000: 6}     # rows per batch: batches per run
QUICK = {1_000: 6, 100_000: 3}
CONTENDERS = ("journal", "journal_python", "parquet", "noop", "arrow_floor")
SMALL_BATCH_ROWS = 10_000                          # journal_driver's smallBatchRows
FLOOR_TARGET = 0.95             # large batches: of the Arrow transfer floor's rows/s
PARQUET_TARGET = 1.0            # large batches: of the parquet sink's rows/s
NOOP_TARGET = 0.7              # large batches, JVM writers: of Spark's noop sink's rows/s
SMALL_TARGET = 1.25             # 1k-row batches by default in local mode: per-batch time <= 0.8x parquet's


FORMATS = ("format", "format_python")


def contenders(rows: int) -> tuple:
    return CONTENDERS + (("journal_driver",) if rows <= SMALL_BATCH_ROWS else FORMATS)


def _events(spark, rows: int):
    from pyspark.sql import functions as F
    rate = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows).load()
    return rate.select(
        F.col("value").alias("id"), F.col("timestamp").alias("ts"),
        F.substring(F.sha2(F.col("value").cast("string"), 256), 1, 16).alias("key"),
        F.repeat(F.lit("p"), 200).alias("payload"),
        (F.col("value") % 1000 / 10.0).cast("double").alias("amount"))


def _count_rows(batches):
    import pyarrow as pa
    total = sum(batch.num_rows for batch in batches)
    yield pa.RecordBatch.from_pylist([{"rows": total}])


def _noop(df, batch_id) -> None:
    df.write.format("noop").mode("overwrite").save()


def _arrow_floor(df, batch_id) -> None:
    df.mapInArrow(_count_rows, "rows long").collect()


def run_one(spark, contender: str, rows: int, batches: int, work: str, run_no: int):
    """(rows/s, per-batch ms list, JournalSink or None) of one streaming run."""
    from ...spark.sink import JournalSink
    name = f"{contender}-{rows}-{run_no}"
    writer = (_events(spark, rows).writeStream.trigger(processingTime="0 seconds")
              .option("checkpointLocation", os.path.join(work, name, "checkpoint")))
    sink = None
    if contender in ("journal", "journal_python", "journal_driver"):
        small = SMALL_BATCH_ROWS if contender == "journal_driver" else 0
        writer_side = "python" if contender == "journal_python" else "auto"
        sink = JournalSink(os.path.join(work, name, "journal"), smallBatchRows=small,
                           writer=writer_side)
        writer = writer.foreachBatch(sink)
    elif contender == "parquet":
        writer = writer.format("parquet").option("path", os.path.join(work, name, "parquet"))
    elif contender in FORMATS:
        writer = (writer.format("sparkjournal").option("path", os.path.join(work, name, "journal"))
                  .option("writer", "python" if contender == "format_python" else "auto"))
    else:
        writer = writer.foreachBatch(_noop if contender == "noop" else _arrow_floor)
    query = writer.start()
    try:
        while query.isActive and len(query.recentProgress) < batches:
            query.awaitTermination(0.05)
    finally:
        query.stop()
    if query.exception():
        raise query.exception()
    progress = [p for p in query.recentProgress if p.numInputRows][1:batches]
    shutil.rmtree(os.path.join(work, name), ignore_errors=True)
    millis = [p.durationMs["triggerExecution"] for p in progress]
    total_rows = sum(p.numInputRows for p in progress)
    return total_rows / (sum(millis) / 1e3), millis, sink


def _breakdown(sinks) -> str:
    parts = {"job": [], "write": [], "PREPARE": [], "commit log": [], "COMMIT": []}
    for sink in sinks:
        if sink is None:
            continue
        for m in list(sink.history)[1:]:
            if m.skipped:
                continue
            parts["job"].append(m.job_ms)
            parts["write"].append(m.write_ms)
            parts["PREPARE"].append(m.prepare_ms)
            parts["commit log"].append(m.commit_log_ms)
            parts["COMMIT"].append(m.commit_records_ms)
    return ", ".join(f"{k} {statistics.median(v):.1f} ms" for k, v in parts.items() if v)


def _writer_taken(sinks) -> str:
    """Which writer the default ("auto") took in these runs' tasks: jvm, python or both."""
    taken = {"jvm" if m.jvm else "python" for sink in sinks for m in sink.history
             if not m.skipped and not m.on_driver}
    return "/".join(sorted(taken)) or "none (no task wrote)"


def _label(rows: int) -> str:
    return f"{rows // 1000}k" if rows < 1_000_000 else f"{rows // 1_000_000}M"


def run(args) -> int:
    logging.getLogger("py4j").setLevel(logging.CRITICAL)     # stop() interrupts a batch
    sizes = QUICK if args.quick else FULL
    if args.only:
        sizes = {rows: batches for rows, batches in sizes.items() if _label(rows) == args.only}
        if not sizes:
            print(f"bench sink: --only {args.only} names no batch size of this run (1k, 100k"
                  f"{'' if args.quick else ', 1M'})")
            return 2
    work = work_folder(args.dir, "sparkjournal-bench-sink-", 0)
    log = bench_log
    spark = tool_session(args.master, "sparkjournal-bench-sink")
    results = []
    try:
        for rows, batches in sizes.items():
            names = list(contenders(rows))
            rates = {c: [] for c in names}
            batch_ms = {c: [] for c in names}
            sinks = {"journal": [], "journal_python": [], "journal_driver": []}
            for run_no in range(REPEATS):
                shift = run_no % len(names)         # each round starts one contender further on
                for contender in names[shift:] + names[:shift]:
                    started = time.monotonic()
                    rate, millis, sink = run_one(spark, contender, rows, batches, work, run_no)
                    rates[contender].append(rate)
                    batch_ms[contender].append(statistics.median(millis))
                    sinks.get(contender, []).append(sink)
                    log(f"{rows} rows/batch, {contender}: {rate:,.0f} rows/s, median batch "
                        f"{statistics.median(millis):.0f} ms ({time.monotonic() - started:.0f} s)")
            rounds = Rounds(rates)
            label = _label(rows)
            default = f"default writer: {_writer_taken(sinks['journal'])}"
            if rows >= 100_000:
                results.append(rounds.result(f"sink {label} rows/batch vs arrow floor", "journal",
                                             "arrow_floor", "rows/s", FLOOR_TARGET, detail=default))
                results.append(rounds.result(f"sink {label} rows/batch vs parquet sink", "journal",
                                             "parquet", "rows/s", PARQUET_TARGET, detail=(
                                                 f"{default}; noop floor "
                                                 f"{rounds.median('noop'):,.0f} rows/s")))
                results.append(rounds.result(f"sink {label} rows/batch vs noop sink", "journal",
                                             "noop", "rows/s", NOOP_TARGET, detail=(
                                                 f"{default}; Spark's own floor: a foreachBatch "
                                                 f"that writes the batch to format('noop')")))
                results.append(rounds.result(
                    f"writeStream.format('sparkjournal') {label} rows/batch vs noop sink",
                    "format", "noop", "rows/s", NOOP_TARGET,
                    detail="the JVM connector's own write against Spark's own floor"))
                results.append(rounds.result(
                    f"sink {label} rows/batch, writer=python, vs arrow floor", "journal_python",
                    "arrow_floor", "rows/s", FLOOR_TARGET))
                results.append(rounds.result(
                    f"sink {label} rows/batch, writer=python, vs parquet sink", "journal_python",
                    "parquet", "rows/s", PARQUET_TARGET))
                results.append(rounds.result(
                    f"writeStream.format('sparkjournal') {label} rows/batch vs parquet sink",
                    "format", "parquet", "rows/s", PARQUET_TARGET,
                    detail="the JVM connector's own write, no Python worker"))
                results.append(rounds.result(
                    f"writeStream.format('sparkjournal') {label} rows/batch, JVM write vs "
                    f"writer=python", "format", "format_python", "rows/s", 1.0,
                    detail="writer=python: the Python data source's writer"))
            else:
                per_second = Rounds({c: [1e3 / ms for ms in v] for c, v in batch_ms.items()})
                parquet_ms = statistics.median(batch_ms["parquet"])
                for contender, how, target in (
                        ("journal", f"tasks write (smallBatchRows=0, a cluster's default; "
                                    f"{default})", 1.0),
                        ("journal_python", "Python tasks write (smallBatchRows=0, writer=python)",
                         1.0),
                        ("journal_driver", f"smallBatchRows={SMALL_BATCH_ROWS} (local mode's "
                                           f"default)", SMALL_TARGET)):
                    journal_ms = statistics.median(batch_ms[contender])
                    results.append(per_second.result(
                        f"sink {label} rows/batch, {how}: batches/s vs parquet", contender,
                        "parquet", "batches/s", target, detail=(
                            f"journal {journal_ms:.0f} ms/batch ({_breakdown(sinks[contender])}); "
                            f"parquet {parquet_ms:.0f} ms; noop "
                            f"{statistics.median(batch_ms['noop']):.0f} ms; arrow floor "
                            f"{statistics.median(batch_ms['arrow_floor']):.0f} ms")))
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    print_report(results, args.json)
    return 0
