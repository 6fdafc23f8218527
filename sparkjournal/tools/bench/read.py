"""``sparkjournal bench read``: reading a journal back, side by side in one run
with what a Spark user would read instead, on the same events and disk.

Events: (long id, timestamp, 16-character key of 1,000 distinct values,
200-character payload, double amount).

* Large batches (``rows`` events written in one batch write, two tasks):
  the journal; the same events as parquet written by Spark; and the **Python
  floor**: a minimal Python data source that memory-maps Arrow IPC files of
  the same events and yields their batches - no Python reader can beat it
  (Spark turns its Arrow into rows and cannot prune columns). Measured: a full
  scan (the noop sink) and ``groupBy(key).agg(sum(amount))``, the journal's
  Python source read three ways: by default (the events and six metadata
  columns), with a user-specified schema of the event columns (the floor's
  columns: the issue's target), and, for the aggregation, with the schema
  pruned to (key, amount) - Spark's idiom for a source that cannot prune,
  which the floor does not use. The default read is also measured against the
  floor over IPC files of that read's own 11 columns, so that both hand Spark
  the same columns.
* The **JVM reader** (jvm.py): when the connector's jar can be had
  (``jvm_build``), the session loads it, ``format("sparkjournal")`` is the
  JVM batch reader and the Python source is read as ``sparkjournal-python``.
  Its default read (every column; Spark prunes the aggregation to key and
  amount) is measured in the same rounds, against parquet (target 1.0) and
  against the Python source's default read, and, for the aggregation,
  against parquet written without dictionary encoding (reported): Spark's
  parquet writer dictionary-encodes the key column, and the aggregation's hash
  map then hashes each key from the dictionary's own bytes, where a journal
  record (Arrow, as written) holds every key's bytes. Without a jar its rows
  are printed as skipped, with the reason.
* Many small batches (read_streams.py; ``--small-batches``, 0 leaves
  them out): a stream of ``small`` micro-batches of 1k rows landed by
  JournalSink and by Spark's exactly-once parquet sink from the same source;
  then the same aggregation over each, the journal by the Python source
  (target 1.5) and by the JVM reader (target 5).
* The Python worker's share of the event-column read, without Spark
  (worker.py): the journal against the floor, and what smaller batches
  and the CRC checks each cost.
* Streaming catch-up (read_streams.py): ``readStream`` with availableNow
  over the large backlog (the JVM stream where the connector is loaded,
  target 1.0, with the Python stream beside it), the journal against Spark's
  file stream source over the parquet copy: whole queries, and their
  micro-batches alone (Spark's triggerExecution).

Every measurement runs in ``--repeats`` interleaved rounds (default
``read_rounds.REPEATS``) after a warm-up; values are medians, and each ratio is the median
of the per-round ratios (report.Rounds).

A benchmark, never a test: nothing asserts a time.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import shutil

import pyarrow as pa

from ...events.lane_scan import scan, spark_facing
from ...events.pruning import Predicate
from ...events.read_columns import full_schema
from ...spark.datasource import JournalDataSource
from ...spark.page_read import plan_pages
from ...spark.reader import JournalReader
from .jvm import JvmBench
from .read_rounds import aggregate, bench_events, full_scan, rows_rounds
from .read_streams import catch_up_results, small_batch_results
from .report import REPORTED, BenchResult, Rounds, print_report
from .support import bench_log, work_folder
from .worker import ipc_batches, worker_results, write_batches

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
    pages = plan_pages(lanes, Predicate(), read_options.journal, stored)
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


READS = {"journal": "with metadata columns", "journal events": "event columns only (user schema)",
         "journal (key, amount)": "schema pruned to (key, amount)"}
FLOOR, WIDE_FLOOR = "python floor", "python floor, 11 columns"
PLAIN_PARQUET = "parquet, no dictionary"
WIDE_PARQUET = "parquet, 11 columns"
JVM, JVM_TARGET = "jvm reader", 1.0
JVM_EVENTS = "jvm reader, event columns"
SCAN_ONLY = (WIDE_PARQUET, JVM_EVENTS)              # contenders of the full scan alone


def _large_batches(bench: JvmBench, journal: str, parquet: str, ipc: str, wide_ipc: str,
                   ddl: str, rows: int, log, repeats: int) -> list[BenchResult]:
    """The large-batch rows: each Python read against the floor, and the JVM
    reader against parquet and the Python default read, interleaved with
    parquet and the floors in one run per query. The full scan also reads
    parquet of the default read's 11 columns and the JVM reader's event
    columns alone: Spark turns every column of a scan into rows for the noop
    sink, so a read of 11 columns against parquet's 5 measures the columns
    as much as the reader."""
    spark = bench.spark
    default = bench.python().load(journal)
    wide_ddl = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in default.schema.fields)
    frames = {"journal": default, "journal events": bench.python(ddl).load(journal),
              "journal (key, amount)": bench.python("key string, amount double").load(journal),
              "parquet": spark.read.parquet(parquet),
              PLAIN_PARQUET: spark.read.parquet(parquet + "-plain"),
              FLOOR: spark.read.format(FLOOR_SOURCE).option("schema", ddl).load(ipc),
              WIDE_FLOOR: spark.read.format(FLOOR_SOURCE).option("schema", wide_ddl).load(wide_ipc)}
    if bench.loaded:
        frames[JVM] = bench.jvm().load(journal)
        frames[JVM_EVENTS] = frames[JVM].select(*frames["parquet"].columns)
        frames[WIDE_PARQUET] = spark.read.parquet(parquet + "-wide")
        read = frames[JVM].count()
        if read != rows:
            raise RuntimeError(f"bench: the JVM reader read {read:,} of the {rows:,} events")
    results = []
    for query, make in (("full scan", full_scan), ("groupBy(key).agg(sum)", aggregate)):
        scan = query == "full scan"
        names = [n for n in frames if (scan and "amount" not in n and n != PLAIN_PARQUET)
                 or (not scan and n not in SCAN_ONLY)]
        rounds = rows_rounds({n: make(frames[n]) for n in names}, rows, log, query, repeats)
        results += _python_rows(rounds, query, rows, [n for n in names if n.startswith("journal")])
        results += _jvm_rows(bench, rounds, query, rows)
    return results


def _python_rows(rounds: Rounds, query: str, rows: int, names: list) -> list[BenchResult]:
    """The Python source's rows of one query: each read against the floor."""
    results = []
    for name in names:
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


def _jvm_rows(bench: JvmBench, rounds: Rounds, query: str, rows: int) -> list[BenchResult]:
    """The JVM reader's rows of one query (skipped rows without a jar): its
    default read against parquet (target 1.0) and against the Python source's;
    the aggregation's also against parquet without dictionary encoding; the
    full scan's also like for like (reported): the default read against
    parquet of the same 11 columns, and the event columns alone against
    parquet."""
    how = ("all columns" if query == "full scan" else
           "all columns asked, Spark prunes to (key, amount)")
    title = f"read {query}, {rows:,} events, JVM reader"
    # (name, contender, baseline, target, target_of, detail)
    wanted = [(f"{title} default read ({how}), vs parquet", JVM, "parquet", JVM_TARGET, "ratio",
               lambda: f"Python source's default read {rounds.median('journal'):,.0f} rows/s "
                       f"(JVM/Python {rounds.paired(JVM, 'journal'):.2f})"),
              (f"{title} vs Python source, both default read", JVM, "journal", 0.0, REPORTED,
               lambda: "")]
    if query != "full scan":
        wanted.append((f"{title} default read, vs parquet written without dictionary encoding",
                       JVM, PLAIN_PARQUET, 0.0, REPORTED, lambda: (
            f"the same events written by Spark with parquet.enable.dictionary=false: "
            f"{rounds.median(PLAIN_PARQUET):,.0f} rows/s, against "
            f"{rounds.median('parquet'):,.0f} with the key column dictionary-encoded")))
    else:
        wanted += [(f"{title} default read, vs parquet of the same 11 columns", JVM, WIDE_PARQUET,
                    0.0, REPORTED, lambda: (
            f"the default read's output written by Spark as parquet: {rounds.median(WIDE_PARQUET):,.0f}"
            f" rows/s, {rounds.paired(WIDE_PARQUET, 'parquet'):.2f} of parquet's 5 columns")),
                   (f"{title}, the event columns parquet holds, vs parquet", JVM_EVENTS, "parquet",
                    0.0, REPORTED, lambda: "select(id, ts, key, payload, amount): 5 columns each")]
    if not bench.loaded:
        return [bench.no_jvm(name, target, target_of) for name, _, _, target, target_of, _ in wanted]
    return [rounds.result(name, contender, baseline, "rows/s", target, target_of, detail=detail())
            for name, contender, baseline, target, target_of, detail in wanted]


def _worker_share(journal: str, ipc: str, repeats: int, log) -> list[BenchResult]:
    """The Python worker's share of the event-column read, without Spark
    (worker.py): the journal's first lane against the first floor file."""
    read_options, log_uri, stored = JournalDataSource({"path": journal})._read_setup()
    lane = JournalReader(journal, log_uri, stored, read_options.journal).partitions()[0].slice
    columns = pa.schema([field.with_nullable(True) for field in stored])   # as the floor's
    records = [batch.num_rows for batch in scan(lane, stored, read_options.journal,
                                                columns=columns)]
    floor_file = os.path.join(ipc, sorted(os.listdir(ipc))[0])
    return worker_results(lane, stored, read_options.journal, columns, floor_file,
                          round(sum(records) / max(len(records), 1)), repeats, log)


def run(args) -> int:
    logging.getLogger("py4j").setLevel(logging.CRITICAL)
    sizes = {**(QUICK if args.quick else FULL)}
    for key, given in (("rows", getattr(args, "events", None)),
                       ("small", getattr(args, "small_batches", None))):
        if given is not None:
            sizes[key] = given
    work = work_folder(args.dir, "sparkjournal-bench-read-", 0)
    log = bench_log
    bench = JvmBench(args.master, "sparkjournal-bench-read", log)
    spark = bench.spark
    spark.dataSource.register(_floor_source())
    results = []
    try:
        rows = sizes["rows"]
        events = bench_events(spark.range(0, rows, numPartitions=2))
        journal, parquet, ipc, wide_ipc = (os.path.join(work, n)
                                           for n in ("journal", "parquet", "ipc", "wide-ipc"))
        os.makedirs(ipc)
        events.write.format("sparkjournal").mode("append").save(journal)
        events.write.parquet(parquet)
        events.write.option("parquet.enable.dictionary", "false").parquet(parquet + "-plain")
        if bench.loaded:                 # the JVM reader's like-for-like baseline
            bench.python().load(journal).write.parquet(parquet + "-wide")
        events.mapInArrow(_ipc_writer(ipc), "rows long").collect()
        journal_as_ipc(journal, wide_ipc, None)
        log(f"landed {rows:,} events three ways under {work}, and the journal's default read "
            f"as IPC for the 11-column floor")
        ddl = ", ".join(f"{f.name} {f.dataType.simpleString()}" for f in events.schema.fields)
        results += _large_batches(bench, journal, parquet, ipc, wide_ipc, ddl, rows, log,
                                  args.repeats)
        results += _worker_share(journal, ipc, args.repeats, log)
        results += catch_up_results(bench, journal, parquet, events.schema, rows, work, log,
                                    args.repeats, parquet + "-wide")
        if sizes["small"]:
            results += small_batch_results(bench, work, sizes["small"], args.master, log,
                                           args.repeats)
        else:
            log("small batches left out (--small-batches 0)")
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)
    if bench.missing:
        print(f"no JVM reader: {bench.missing}")
    print_report(results, args.json)
    return 0
