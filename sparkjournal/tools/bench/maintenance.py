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
* ``writer_latency``: a writer committing 4 KiB records one at a time, each
  synced (and deleting an older one every other commit, so there is always
  something dead to compact), alone on its lane, then with compactions looping
  on the same lane in another process (as ``sparkjournal compact`` would run
  beside a live writer), at the default ``maintenanceBytesPerSecond`` and with
  no rate limit. Percentiles are over every commit of the ``REPEATS``
  interleaved phases of each kind; the longest stall is the slowest single
  commit (a roll that reloads after a compaction swap included). Targets: p99
  beside compaction at the default limit at most 2x the plain p99, no stall
  above 100 ms; with no limit, reported.

* ``paged_read`` (paged_read.py, on local Spark): a journal whose events
  are ~90 % paged, aggregated and scanned through ``sparkjournal.read`` (page
  files by Spark's Parquet reader) and the format reader, against Spark parquet
  of the same events. Target: the aggregation at least 0.8 of parquet's rows/s.

A benchmark, never a test: nothing here asserts a time. MISS rows are facts.
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from ...io.files_io import fsync_dir
from ...config import JournalConfig
from ...journal.journal import Journal
from ...maintenance.compactor import compact_lane
from ...units import human_bytes
from .paged_read import section_paged_read
from .report import REPORTED, BenchResult
from .support import run_cases

REPEATS = 3
MIB = 1 << 20
BODY = 4096
# Record sizes compacted: small records (the per-record cost), and large ones
# (the sink writes Arrow pieces up to a quarter of a data file at large batches).
COMPACT_BODIES = (BODY, 256 << 10)
clock = time.perf_counter

FULL = {"compact_bytes": 128 * MIB, "compact_file": 2 * MIB,
        "latency_prefill": 32 * MIB, "latency_commits": 2000, "paged_rows": 2_000_000}
QUICK = {"compact_bytes": 16 * MIB, "compact_file": 1 * MIB,
         "latency_prefill": 4 * MIB, "latency_commits": 200, "paged_rows": 200_000}
LATENCY_OPTIONS = {"fileSize": "1m", "minFiles": 2}
DEFAULT_RATE = JournalConfig.maintenanceBytesPerSecond


class MaintenanceBench:
    def __init__(self, directory: str, sizes: dict, log):
        self.directory, self.sizes, self.log = directory, sizes, log

    def folder(self, prefix: str) -> str:
        return tempfile.mkdtemp(prefix=prefix, dir=self.directory)


def half_dead_lane(lane: str, nbytes: int, body_size: int = BODY, **options) -> int:
    """Writes ``nbytes`` of records of ``body_size`` bytes (unsynced, one
    flush) and deletes every other one; returns the highest record id."""
    count = max(nbytes // body_size, 16)
    body = os.urandom(body_size)
    with Journal.open(lane, **options) as journal:
        for record_id in range(1, count + 1):
            journal.append_add(record_id, body, sync=False)
        for record_id in range(2, count + 1, 2):
            journal.append_delete(record_id, sync=False)
        journal.flush()
    return count


def data_files(lane: str) -> list[str]:
    return sorted(os.path.join(lane, n) for n in os.listdir(lane) if n.endswith(".sjd"))


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


# --- writer latency beside compaction ---------------------------------------------------------

COMPACT_LOOP = """
import json, sys, threading
from sparkjournal.maintenance.compactor import compact_lane
lane, options = sys.argv[1], json.loads(sys.argv[2])
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
print("ready", flush=True)
done = runs = 0
longest = 0.0
while not stop.is_set():
    report = compact_lane(lane, force=True, **options)
    runs += 1
    done += report.compacted
    longest = max(longest, report.seconds)
print(json.dumps({"runs": runs, "compacted": done, "longest": longest}), flush=True)
"""


def _compactor(lane: str, rate: int) -> subprocess.Popen:
    """A process compacting ``lane`` in a loop until its stdin closes, its
    writes paced at ``rate`` bytes/s (0: no limit)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    options = {**LATENCY_OPTIONS, "maintenanceBytesPerSecond": rate}
    child = subprocess.Popen([sys.executable, "-c", COMPACT_LOOP, lane, json.dumps(options)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": path})
    if child.stdout.readline().strip() != "ready":
        child.kill()
        raise RuntimeError("the compaction process of the latency benchmark did not start")
    return child


def _commits(lane: str, first_id: int, count: int) -> list[float]:
    """Seconds of each of ``count`` synced 4 KiB commits (every other one also
    deletes an older record)."""
    body = os.urandom(BODY)
    latencies = []
    with Journal.open(lane, **LATENCY_OPTIONS) as journal:
        for n in range(count):
            record_id = first_id + n
            started = clock()
            if n % 2:
                journal.append_delete(record_id - 1, sync=False)
            journal.append_add(record_id, body, sync=True)
            latencies.append(clock() - started)
    return latencies


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def section_writer_latency(bench: MaintenanceBench) -> list:
    sizes = bench.sizes
    template = os.path.join(bench.folder("latency-template-"), "lane")
    first_id = half_dead_lane(template, sizes["latency_prefill"], **LATENCY_OPTIONS) + 1
    rates = {"plain": None, "compacting": DEFAULT_RATE, "compacting, no rate limit": 0}
    phases = {kind: [] for kind in rates}
    compactions = {kind: 0 for kind in rates}
    for rep in range(REPEATS):
        for kind in phases:
            lane = os.path.join(bench.folder(f"latency-{kind}-"), "lane")
            shutil.copytree(template, lane)
            child = _compactor(lane, rates[kind]) if rates[kind] is not None else None
            try:
                latencies = _commits(lane, first_id, sizes["latency_commits"])
            finally:
                if child is not None:
                    out, _ = child.communicate("", timeout=600)
                    ran = json.loads(out.strip().splitlines()[-1])
                    compactions[kind] += ran["compacted"]
            phases[kind] += latencies
            shutil.rmtree(os.path.dirname(lane))
            bench.log(f"writer latency run {rep + 1}/{REPEATS}, {kind}: p50 "
                      f"{_percentile(latencies, 0.5) * 1e3:.2f} ms, p99 "
                      f"{_percentile(latencies, 0.99) * 1e3:.2f} ms, max {max(latencies) * 1e3:.1f} ms"
                      + (f"; {ran['compacted']} compactions" if child is not None else ""))
    shutil.rmtree(os.path.dirname(template))
    stats = {kind: {p: _percentile(v, f) * 1e3 for p, f in (("p50", 0.5), ("p99", 0.99), ("max", 1.0))}
             for kind, v in phases.items()}
    line = "; ".join(f"{kind}: p50 {s['p50']:.2f} ms, p99 {s['p99']:.2f} ms, max {s['max']:.1f} ms"
                     for kind, s in stats.items())
    commits = len(phases["plain"])
    limit = f"maintenanceBytesPerSecond={human_bytes(DEFAULT_RATE)} (the default)"
    return [
        BenchResult(f"writer p99 commit latency, compaction running at {limit}",
                    stats["compacting"]["p99"], "ms", stats["plain"]["p99"], 2.0, "max_ratio",
                    f"{commits} synced 4 KiB commits per kind over {REPEATS} interleaved phases; "
                    f"compactions beside the writer: {compactions['compacting']} at the default "
                    f"limit, {compactions['compacting, no rate limit']} without; {line}"),
        BenchResult("writer p99 commit latency, compaction running with no rate limit",
                    stats["compacting, no rate limit"]["p99"], "ms", stats["plain"]["p99"], 0.0,
                    REPORTED, "the same writer beside compactions whose writes are not paced"),
        BenchResult(f"writer longest stall, compaction running at {limit}", stats["compacting"]["max"],
                    "ms", stats["plain"]["max"], 100.0, "max_value",
                    "the slowest single commit (baseline: the slowest without compaction)"),
    ]


SECTIONS = {"compaction": section_compaction, "writer_latency": section_writer_latency,
            "paged_read": section_paged_read}


def run(args) -> int:
    sizes = QUICK if args.quick else FULL
    return run_cases(args, SECTIONS, sizes, "sparkjournal-bench-maintenance-",
                     3 * max(sizes["compact_bytes"], sizes["latency_prefill"]) + 256 * MIB,
                     MaintenanceBench)
