"""The ``paged_read`` section of ``sparkjournal bench maintenance``: reading a
journal whose events are mostly paged, against plain Spark parquet of the same
events, measured side by side in one run.

The same events (read.py's: id, ts, 16-char key, 200-char payload, amount)
land once through the ``sparkjournal`` format writer and once as parquet written
by Spark. Every lane is then paged with page files of 64 MiB, as many as fit in
nine tenths of its bytes (``maxSizeBytes`` set so), so most of the events (the
run prints how many) live in Parquet page files and the rest in the journal's
live tail. Contenders, each
median of interleaved runs after a warm-up: ``groupBy(key).agg(sum(amount))`` and
a full scan through the locality-aware read (``sparkjournal.read``: page files by
Spark's native Parquet reader, the tail through Python), and through the format
reader (``spark.read.format("sparkjournal")``: pages read by Python), against
``spark.read.parquet``. Spark's parquet reader reads only the columns a query
uses, so the aggregation is also measured through ``sparkjournal.read(...,
columns=["key", "amount"])``, which gives the journal the same pruning (page
files by Spark's reader, the tail by the lane tasks). Target (issue 5): the
locality-aware read's aggregation at least 0.8 of parquet's rows/s.

The **JVM reader** (jvm.py): the session loads the connector's jar when
there is one, the format reader above is then read as ``sparkjournal-python``
and ``spark.read.format("sparkjournal")`` is the JVM reader, whose default
read is measured against parquet (aggregation: target 0.9). Where there is
no jar its rows are printed as skipped with the reason; a JVM read that
returns another number of events than were written stops the benchmark.

The **paged floor** bounds what any reader that reads the tail through Python
can reach: the same page files through ``spark.read.parquet``, unioned with
the same tail events, only (key, amount), already decoded into one Arrow IPC
file per lane and served by the floor source of read.py (a minimal
Python data source yielding memory-mapped batches; no journal, no CRC, no
visibility rules). It is aggregated in the same interleaved runs.
"""
from __future__ import annotations

import logging
import os

from ...config import load_config
from ...events.commit_log import default_log_uri
from ...events.visible_events import node_lanes
from ...journal.lock import LaneLock
from ...maintenance.lane_size import lane_bytes
from ...maintenance.lane_maintenance import page_pass
from .jvm import JvmBench
from .read_rounds import aggregate, bench_events, full_scan, rows_rounds
from .report import REPORTED, skipped

PAGE_SIZE = 64 << 20
PAGED_SHARE = 0.9                    # at most this share of a lane's bytes is paged
FLOOR = "paged floor (pages by parquet, tail by the Python floor source)"
PRUNED = "paged, sparkjournal.read (key, amount)"
AGGREGATION_ONLY = (PRUNED, FLOOR)          # contenders of the aggregation, not of the full scan
JVM = "paged, JVM reader"
JVM_TARGET = 0.9                            # the JVM reader's aggregation, of parquet's rows/s


def _wait_free(lanes: list[str], timeout: float = 120.0) -> None:
    """Spark's workers keep lane writers open for laneIdleTimeout; paging needs
    them closed to commit its pages here and now."""
    for lane in lanes:
        lock = LaneLock(lane)
        lock.acquire(wait=True, timeout=timeout)
        lock.release()


def _page_mostly(journal: str, log) -> tuple[int, int]:
    """Pages as many whole pages of every lane as fit in PAGED_SHARE of it (the
    paging step pages until the excess over maxSizeBytes is covered: an excess of
    k - 1/2 pages makes k); (rows paged, pages written)."""
    rows = pages = 0
    for lane, node in node_lanes(journal):
        size = lane_bytes(lane)
        whole_pages = max(1, int(size * PAGED_SHARE // PAGE_SIZE))
        limit = max(0, size - (whole_pages * PAGE_SIZE - PAGE_SIZE // 2))
        config = load_config({"maxSizeBytes": str(limit), "pageSizeBytes": str(PAGE_SIZE)})
        report = page_pass(lane, node, default_log_uri(journal), config).paging
        log(f"paging: {report.line()}")
        rows, pages = rows + report.rows_paged, pages + report.pages_written
    return rows, pages


def section_paged_read(bench) -> list:
    from .read import FLOOR_SOURCE, _floor_source, journal_as_ipc
    from ...spark.locality import read
    logging.getLogger("py4j").setLevel(logging.CRITICAL)
    rows = bench.sizes["paged_rows"]
    journal, parquet = (os.path.join(bench.directory, n) for n in ("paged-journal", "paged-parquet"))
    jvm = JvmBench("local[*]", "sparkjournal-bench-paged-read", bench.log)
    spark = jvm.spark
    try:
        events = bench_events(spark.range(0, rows, numPartitions=2))
        events.write.format("sparkjournal").option("laneIdleTimeout", "1s").mode("append").save(journal)
        events.write.parquet(parquet)
        _wait_free([lane for lane, _node in node_lanes(journal)])
        paged_rows, pages = _page_mostly(journal, bench.log)
        bench.log(f"paged {paged_rows:,} of {rows:,} events into {pages} page files")
        page_paths, tail_rows = journal_as_ipc(journal, os.path.join(bench.directory, "paged-tail"),
                                               ["key", "amount"])
        if paged_rows + tail_rows != rows:
            raise RuntimeError(f"bench: pages ({paged_rows:,}) and tail ({tail_rows:,}) do not "
                               f"add up to the {rows:,} events written")
        spark.dataSource.register(_floor_source())
        floor = spark.read.parquet(*page_paths).select("key", "amount").union(
            spark.read.format(FLOOR_SOURCE).option("schema", "key string, amount double")
            .load(os.path.join(bench.directory, "paged-tail")))
        frames = {"paged, sparkjournal.read": read(spark, journal),
                  PRUNED: read(spark, journal, columns=["key", "amount"]),
                  "paged, format reader": jvm.python().load(journal),
                  FLOOR: floor,
                  "parquet": spark.read.parquet(parquet)}
        jvm_skipped = _jvm_skipped(jvm, journal, rows)
        if not jvm_skipped:
            frames[JVM] = jvm.jvm().load(journal)
        results = []
        for query, make, target, target_of in (("groupBy(key).agg(sum)", aggregate, 0.8, "ratio"),
                                               ("full scan", full_scan, 0.0, REPORTED)):
            names = [n for n in frames if make is aggregate or n not in AGGREGATION_ONLY]
            rounds = rows_rounds({n: make(frames[n]) for n in names}, rows, bench.log, query)
            med = rounds.medians()
            detail = (f"{paged_rows / rows:.0%} of events paged into {pages} files; format "
                      f"reader {med['paged, format reader']:,.0f} rows/s "
                      f"({med['paged, format reader'] / med['parquet']:.2f} of parquet)")
            for name in (n for n in names if n.startswith("paged, sparkjournal.read")):
                pruned = name == PRUNED
                how = ("only the columns it uses (columns=[key, amount]), as parquet reads"
                       if pruned else "every column, with metadata")
                results.append(rounds.result(
                    f"read {query} of {rows:,} mostly paged events, {how}, vs parquet", name,
                    "parquet", "rows/s", target, target_of, detail))
            if make is aggregate:
                results.append(rounds.result(
                    f"read {query} of {rows:,} mostly paged events, paged floor, vs parquet", FLOOR,
                    "parquet", "rows/s", 0.0, REPORTED,
                    f"the same page files by spark.read.parquet, the {tail_rows:,} tail events "
                    f"(key, amount only, decoded beforehand) by the Python floor source: the "
                    f"most a reader whose tail goes through Python can reach"))
            name = f"read {query} of {rows:,} mostly paged events, JVM reader default read, vs parquet"
            jvm_target, jvm_of = (JVM_TARGET, "ratio") if make is aggregate else (0.0, REPORTED)
            results.append(skipped(name, "rows/s", jvm_target, jvm_skipped, jvm_of) if jvm_skipped
                           else rounds.result(name, JVM, "parquet", "rows/s", jvm_target, jvm_of,
                                              detail))
        return results
    finally:
        spark.stop()


def _jvm_skipped(jvm: JvmBench, journal: str, rows: int) -> str:
    """Why the JVM reader's paged rows are skipped in this run ("": they are not)."""
    if not jvm.loaded:
        return f"no JVM reader: {jvm.missing}"
    read = jvm.jvm().load(journal).count()
    if read != rows:
        raise RuntimeError(f"bench: the JVM reader read {read:,} of the {rows:,} paged events")
    return ""
