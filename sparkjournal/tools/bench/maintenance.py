"""``sparkjournal bench maintenance``: maintenance against what it competes with,
measured side by side in one run, in one folder (so on one disk).

Sections (``SECTIONS``; ``--only TEXT`` runs those whose name contains TEXT).
Each is a function ``(MaintenanceBench) -> list[BenchResult]``:

* ``compaction``: ``compact_lane(force=True)`` of a lane of many files, about
  half of whose records are dead (once with 4 KiB records, once with 256 KiB
  ones: the per-record cost, and records as big as the sink's), against a plain copy of the same number of
  live bytes (read + write + fsync per file, then the folder); both read from
  the page cache (every source file is read once before each timed run). MB/s
  is live bytes rewritten over the whole compaction (load, rewrite, control
  file, swap). Target: at least 0.5 of the copy.
* ``writer_latency`` (writer_latency.py): a writer's synced 4 KiB commits
  alone and beside compaction and paging passes looping on its lane, at the
  default ``maintenanceBytesPerSecond`` and with no limit. Targets: p99
  beside maintenance at the default limit at most 2x the plain p99, no stall
  above 100 ms.

* ``paged_read`` (paged_read.py, on local Spark): a journal whose events
  are ~90 % paged, aggregated and scanned through ``sparkjournal.read`` (page
  files by Spark's Parquet reader) and the format reader, against Spark parquet
  of the same events. Target: the aggregation at least 0.8 of parquet's rows/s.

A benchmark, never a test: nothing here asserts a time. MISS rows are facts.
"""
from __future__ import annotations

import os
import shutil
import statistics
import tempfile
import time

from ...io.files_io import fsync_dir
from ...maintenance.compactor import compact_lane
from ...units import human_bytes
from .lanes import BODY, data_files, half_dead_lane
from .paged_read import section_paged_read
from .report import REPORTED, BenchResult
from .support import run_cases
from .writer_latency import DEFAULT_RATE, section_writer_latency

REPEATS = 3
MIB = 1 << 20
# Record sizes compacted: small records (the per-record cost), and large ones
# (the sink writes Arrow pieces up to a quarter of a data file at large batches).
COMPACT_BODIES = (BODY, 256 << 10)
clock = time.perf_counter

FULL = {"compact_bytes": 128 * MIB, "compact_file": 2 * MIB,
        "latency_prefill": 32 * MIB, "latency_commits": 2000, "paged_rows": 2_000_000}
QUICK = {"compact_bytes": 16 * MIB, "compact_file": 1 * MIB,
         "latency_prefill": 4 * MIB, "latency_commits": 200, "paged_rows": 200_000}


class MaintenanceBench:
    def __init__(self, directory: str, sizes: dict, log):
        self.directory, self.sizes, self.log = directory, sizes, log

    def folder(self, prefix: str) -> str:
        return tempfile.mkdtemp(prefix=prefix, dir=self.directory)


def warm(paths: list[str]) -> None:
    """Reads every byte once, so the timed run reads from the page cache."""
    buffer = bytearray(MIB)
    for path in paths:
        with open(path, "rb", buffering=0) as handle:
            while handle.readinto(buffer):
                pass


def plain_copy_seconds(sources: list[str], nbytes: int, out_dir: str, file_size: int) -> float:
    """Seconds to copy the first ``nbytes`` of ``sources`` into new files of at
    most ``file_size`` bytes: read, write, fsync each file, then the folder."""
    buffer = memoryview(bytearray(MIB))
    started = clock()
    inputs = iter(sources)
    source = open(next(inputs), "rb", buffering=0)
    remaining, number = nbytes, 0
    try:
        while remaining > 0:
            number += 1
            fd = os.open(os.path.join(out_dir, f"copy-{number:06d}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            try:
                room = min(file_size, remaining)
                while room > 0:
                    got = source.readinto(buffer[:min(len(buffer), room)])
                    if not got:
                        source.close()
                        source = open(next(inputs), "rb", buffering=0)
                        continue
                    os.write(fd, buffer[:got])
                    room -= got
                    remaining -= got
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(out_dir)
    finally:
        source.close()
    return clock() - started


def section_compaction(bench: MaintenanceBench) -> list:
    return ([compaction_vs_copy(bench, body_size, 0) for body_size in COMPACT_BODIES]
            + [compaction_vs_copy(bench, COMPACT_BODIES[-1], DEFAULT_RATE)])


def compaction_vs_copy(bench: MaintenanceBench, body_size: int, rate: int) -> BenchResult:
    """Compaction with maintenanceBytesPerSecond ``rate`` (0: no limit, target
    0.5 of the copy; the default limit: reported) against a plain copy."""
    sizes = bench.sizes
    options = {"fileSize": sizes["compact_file"], "minFiles": 2, "maintenanceBytesPerSecond": rate}
    template = os.path.join(bench.folder("compact-template-"), "lane")
    half_dead_lane(template, sizes["compact_bytes"], body_size, **options)
    sources = data_files(template)
    compact_rates, copy_rates, phases, first = [], [], [], None
    for rep in range(REPEATS):
        lane = os.path.join(bench.folder("compact-"), "lane")
        shutil.copytree(template, lane)
        warm(data_files(lane))
        started = clock()
        report = compact_lane(lane, force=True, **options)
        seconds = clock() - started
        if not report.compacted:
            raise AssertionError(f"the benchmark lane was not compacted: {report.reason}")
        shutil.rmtree(os.path.dirname(lane))
        out = bench.folder("copy-")
        warm(sources)
        copy_seconds = plain_copy_seconds(sources, report.bytes_after, out, sizes["compact_file"])
        shutil.rmtree(out)
        phases.append((seconds, report.rewrite_seconds, report.swap_seconds))
        compact_rates.append(report.bytes_after / seconds / 1e6)
        copy_rates.append(report.bytes_after / copy_seconds / 1e6)
        first = first or report
        bench.log(f"compaction of {human_bytes(body_size)} records, run {rep + 1}/{REPEATS}: compaction {compact_rates[-1]:,.1f} MB/s "
                  f"({report.compacted_files} -> {report.new_files} files, rewrite "
                  f"{report.rewrite_seconds:.2f}s of {seconds:.2f}s), plain copy {copy_rates[-1]:,.1f} MB/s")
    shutil.rmtree(os.path.dirname(template))
    report = first
    total, rewrite, swap = (statistics.median(p[i] for p in phases) for i in range(3))
    limit = f"at maintenanceBytesPerSecond={human_bytes(rate)}" if rate else "no rate limit"
    return BenchResult(
        f"compaction vs plain copy, {human_bytes(body_size)} records, {limit}",
        statistics.median(compact_rates), "MB/s", statistics.median(copy_rates),
        0.0 if rate else 0.5, REPORTED if rate else "ratio",
        f"{report.compacted_files} files of {human_bytes(sizes['compact_file'])} "
        f"({human_bytes(report.bytes_before)} of records; {report.records_kept} kept, "
        f"{report.records_dropped} dead records and deletes dropped) -> {report.new_files} "
        f"files ({human_bytes(report.bytes_after)} live) per run, in {total:.3f}s: rewrite "
        f"{rewrite:.3f}s, swap {swap:.3f}s, load and plan {total - rewrite - swap:.3f}s "
        f"(medians); copy: the same live bytes, read + write + fsync per file; page cache "
        f"warm for both")


SECTIONS = {"compaction": section_compaction, "writer_latency": section_writer_latency,
            "paged_read": section_paged_read}


def run(args) -> int:
    sizes = QUICK if args.quick else FULL
    return run_cases(args, SECTIONS, sizes, "sparkjournal-bench-maintenance-",
                     3 * max(sizes["compact_bytes"], sizes["latency_prefill"]) + 256 * MIB,
                     MaintenanceBench)
