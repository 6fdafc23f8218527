"""The streaming cases of ``sparkjournal bench read`` (read.py):

* many small batches: a stream of ``small`` micro-batches of 1k rows landed by
  JournalSink (driver-written small batches, ``smallBatchRows``, where the sink
  allows them: local mode) and by Spark's exactly-once parquet sink from the
  same source; then ``groupBy(key).agg(sum(amount))`` over each, the journal
  read by the Python source and by the JVM reader;
* streaming catch-up: ``readStream`` with availableNow over the large backlog,
  the journal (the JVM stream where the connector is loaded, target 1.0, and
  the Python stream beside it) against Spark's file stream source over the
  parquet copy: whole queries, and their micro-batches alone (Spark's
  triggerExecution).
"""
from __future__ import annotations

import os
import shutil
import statistics
import time

from .read_rounds import aggregate, bench_events, rows_rounds
from .report import REPORTED, BenchResult, Rounds

SMALL_BATCH_ROWS = 10_000          # the sink's smallBatchRows where it allows them (local mode)
SMALL_TARGET, SMALL_JVM_TARGET = 1.5, 5.0
PYTHON, JVM, PARQUET_SINK = "journal", "jvm reader", "parquet sink"


def _local_mode(master: str) -> bool:
    return master == "local" or master.startswith("local[")


def land_small_stream(spark, work: str, batches: int, master: str) -> tuple[str, str]:
    """One rate-micro-batch stream of 1k-row batches landed twice, by JournalSink
    and by the parquet sink (two queries over the same deterministic source)."""
    from ...spark.sink import JournalSink
    sink_options = {"smallBatchRows": SMALL_BATCH_ROWS} if _local_mode(master) else {}
    journal, parquet = os.path.join(work, "small-journal"), os.path.join(work, "small-parquet")
    for name in ("journal", "parquet"):
        source = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", 1000).load()
        writer = (bench_events(source.withColumnRenamed("value", "id")).writeStream
                  .trigger(processingTime="0 seconds")
                  .option("checkpointLocation", os.path.join(work, f"small-{name}-checkpoint")))
        if name == "journal":
            writer = writer.foreachBatch(JournalSink(journal, **sink_options))
        else:
            writer = writer.format("parquet").option("path", parquet)
        query = writer.start()
        try:
            # recentProgress keeps only the last 100 updates: count by batch id.
            while query.isActive and _last_batch_id(query) + 1 < batches:
                query.awaitTermination(0.2)
            if not query.isActive and query.exception():
                raise RuntimeError(f"bench: the small-batch {name} stream failed: "
                                   f"{query.exception()}")
        finally:
            query.stop()
    return journal, parquet


def _last_batch_id(query) -> int:
    progress = query.lastProgress
    return progress["batchId"] if progress and progress.get("numInputRows") else -1


def small_batch_results(bench, work: str, batches: int, master: str, log,
                        repeats: int) -> list[BenchResult]:
    """The aggregation after ``batches`` micro-batches of 1k rows: the journal
    by the Python source (target 1.5) and by the JVM reader (target 5) against
    the parquet sink's output, and the JVM reader against the Python source."""
    spark = bench.spark
    started = time.monotonic()
    journal, parquet = land_small_stream(spark, work, batches, master)
    log(f"landed {batches} micro-batches of 1k rows twice ({time.monotonic() - started:.0f} s)")
    frames = {PYTHON: bench.python().load(journal), PARQUET_SINK: spark.read.parquet(parquet)}
    if bench.loaded:
        frames[JVM] = bench.jvm().load(journal)
    counts = {n: f.count() for n, f in frames.items()}
    if bench.loaded and counts[JVM] != counts[PYTHON]:
        raise RuntimeError(f"bench: the JVM reader read {counts[JVM]:,} rows of the small-batch "
                           f"journal, the Python source {counts[PYTHON]:,}")
    rounds = rows_rounds({n: aggregate(f) for n, f in frames.items()}, counts, log,
                     "aggregate after small batches", repeats)
    title = f"read after {batches} micro-batches of 1k: agg"
    rows = f"rows: journal {counts[PYTHON]:,}, parquet sink {counts[PARQUET_SINK]:,}"
    results = [rounds.result(f"{title} vs parquet sink output", PYTHON, PARQUET_SINK, "rows/s",
                             SMALL_TARGET, detail=f"the Python source; {rows}")]
    jvm_rows = ((f"{title}, JVM reader, vs parquet sink output", PARQUET_SINK, SMALL_JVM_TARGET,
                 "ratio", rows),
                (f"{title}, JVM reader vs Python source", PYTHON, 0.0, REPORTED, ""))
    for name, baseline, target, target_of, detail in jvm_rows:
        results.append(rounds.result(name, JVM, baseline, "rows/s", target, target_of, detail)
                       if bench.loaded else bench.no_jvm(name, target, target_of))
    return results


def _catch_up(reader, work: str, name: str, triggers: list):
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


CATCH_UP_TARGET = 1.0               # the JVM stream's catch-up, of the file stream source's rows/s
STREAM_JVM, STREAM_PYTHON, FILE_STREAM = "JVM stream", "Python stream", "file stream"
WIDE_FILE_STREAM = "file stream, 11 columns"


def catch_up_results(bench, journal: str, parquet: str, schema, rows: int, work: str, log,
                     repeats: int, wide_parquet: str) -> list[BenchResult]:
    """The journal's streaming reads against Spark's file stream source over
    the parquet copy, in the same rounds: the JVM stream (target 1.0; its rows
    skipped, saying why, without the connector) and the Python stream reader.
    The JVM stream is also measured like for like (reported) against the file
    stream over ``wide_parquet``: parquet of the stream's own 11 columns."""
    spark = bench.spark
    formats = {STREAM_PYTHON: bench.python_format}
    if bench.loaded:
        formats[STREAM_JVM] = "sparkjournal"
    triggers = {name: [] for name in [*formats, FILE_STREAM]}
    catch = {name: _catch_up(lambda fmt=fmt: spark.readStream.format(fmt).load(journal), work,
                             name.split()[0].lower(), triggers[name]) for name, fmt in formats.items()}
    catch[FILE_STREAM] = _catch_up(lambda: spark.readStream.schema(schema).parquet(parquet),
                                   work, "parquet", triggers[FILE_STREAM])
    if bench.loaded:
        wide_schema = spark.read.parquet(wide_parquet).schema
        triggers[WIDE_FILE_STREAM] = []
        catch[WIDE_FILE_STREAM] = _catch_up(
            lambda: spark.readStream.schema(wide_schema).parquet(wide_parquet), work,
            "parquet-wide", triggers[WIDE_FILE_STREAM])
    whole = rows_rounds(catch, rows, log, "streaming catch-up", repeats)
    # the warm-up's micro-batches are left out, as its wall time is
    batches = Rounds({n: [rows / seconds for seconds in t[1:]] for n, t in triggers.items()})
    started = ", ".join(
        f"{n} {statistics.median(rows / rate - s for rate, s in zip(whole.values[n], t[1:])):.2f} s"
        for n, t in triggers.items())
    title = f"stream catch-up over {rows:,} events"
    jvm_rows = [(whole, f"{title}, JVM stream, vs file stream source", FILE_STREAM, CATCH_UP_TARGET,
                 "ratio", f"query start and stop: {started}"),
                (batches, f"{title}, JVM stream, the micro-batch alone (triggerExecution), vs file "
                          f"stream source", FILE_STREAM, 0.0, REPORTED, ""),
                (whole, f"{title}, JVM stream, vs file stream source of the same 11 columns",
                 WIDE_FILE_STREAM, 0.0, REPORTED,
                 "the file stream over parquet of the JVM stream's own columns (events and "
                 "metadata)"),
                (whole, f"{title}, JVM stream vs Python stream", STREAM_PYTHON, 0.0, REPORTED, "")]
    results = [rounds.result(name, STREAM_JVM, baseline, "rows/s", target, target_of, detail)
               if bench.loaded else bench.no_jvm(name, target, target_of)
               for rounds, name, baseline, target, target_of, detail in jvm_rows]
    results.append(whole.result(f"{title}, Python stream, vs file stream source", STREAM_PYTHON,
                                FILE_STREAM, "rows/s", 0.0, REPORTED,
                                "" if bench.loaded else f"query start and stop: {started}"))
    return results
