"""``bench maintenance``'s ``writer_latency`` section: a lane's writer beside
maintenance looping on the same lane in another process, as ``sparkjournal
compact`` or a maintenance job runs beside a live writer.

The writer commits 4 KiB records one at a time, each synced, and deletes an
older one every other commit (so there is always something dead to
compact): alone, beside compactions (``compact_lane(force=True)`` in a loop)
and beside paging passes (``page_lane(force=True)`` in a loop: the writer
holds the lane, so each pass writes one page file and leaves its commit to
the writer, as beside a sink's live worker), each at the default
``maintenanceBytesPerSecond`` and with no limit. Before each phase the lane's
files are dropped from the page cache, as the sink leaves them (it writes
with O_DIRECT), so maintenance's first reads come from the disk. Percentiles
are over every commit of the ``REPEATS`` interleaved phases of each kind; the
longest stall is the slowest single commit (a roll that reloads after a
compaction swap included). Targets: p99 beside maintenance at the default
limit at most 2x the plain p99, no stall above 100 ms; with no limit,
reported.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

from ...config import JournalConfig
from ...events.commit_log import default_log_uri
from ...journal.journal import Journal
from ...units import human_bytes
from .lanes import BODY, events_root, evict, half_dead_lane
from .report import REPORTED, BenchResult

REPEATS = 3
LATENCY_OPTIONS = {"fileSize": "1m", "minFiles": 2}
PAGING_OPTIONS = {**LATENCY_OPTIONS, "pageSizeBytes": "4m"}
DEFAULT_RATE = JournalConfig.maintenanceBytesPerSecond
clock = time.perf_counter

# A maintenance loop in a process of its own, until its stdin closes; prints
# {"runs", "done"} (passes that compacted, or pages written) at the end.
LOOP = """
import json, sys, threading
from sparkjournal.config import load_config
from sparkjournal.maintenance.compactor import compact_lane
from sparkjournal.maintenance.paging import page_lane
kind, lane, node, log_uri, options = sys.argv[1:5] + [json.loads(sys.argv[5])]
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
print("ready", flush=True)
runs = done = 0
while not stop.is_set():
    if kind == "compaction":
        done += compact_lane(lane, force=True, **options).compacted
    else:
        report = page_lane(lane, node, log_uri, load_config(options), force=True)
        done += report.pages_written + report.pages_pending
    runs += 1
print(json.dumps({"runs": runs, "done": done}), flush=True)
"""


def _maintainer(kind: str, lane: str, node: str, log_uri: str, options: dict) -> subprocess.Popen:
    """A process running ``kind`` ("compaction" or "paging") passes on ``lane``."""
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))))
    path = os.pathsep.join(p for p in (package_parent, os.environ.get("PYTHONPATH")) if p)
    child = subprocess.Popen([sys.executable, "-c", LOOP, kind, lane, node, log_uri,
                              json.dumps(options)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": path})
    if child.stdout.readline().strip() != "ready":
        child.kill()
        child.wait()
        raise RuntimeError(f"the {kind} process of the latency benchmark did not start")
    return child


def _stop(child: subprocess.Popen, kind: str) -> dict:
    """Ends a maintenance loop (its stdin closes); what it printed it ran."""
    try:
        out, _ = child.communicate("", timeout=600)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
        raise RuntimeError(f"the {kind} process of the latency benchmark did not stop in 600 s")
    lines = out.strip().splitlines()
    if child.returncode != 0 or not lines:
        raise RuntimeError(f"the {kind} process of the latency benchmark failed "
                           f"(exit {child.returncode}); see its stderr above")
    return json.loads(lines[-1])


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


# kind: (maintenance, its rate; None for the writer alone)
KINDS = {"plain": (None, 0), "compacting": ("compaction", DEFAULT_RATE),
         "compacting, no rate limit": ("compaction", 0), "paging": ("paging", DEFAULT_RATE),
         "paging, no rate limit": ("paging", 0)}


def section_writer_latency(bench) -> list:
    sizes = bench.sizes
    compact_template = os.path.join(bench.folder("latency-template-"), "lane")
    compact_first = half_dead_lane(compact_template, sizes["latency_prefill"], **LATENCY_OPTIONS) + 1
    events_template = os.path.join(bench.folder("latency-events-"), "root")
    events_lane, node, _log, last = events_root(events_template, sizes["latency_prefill"],
                                                **PAGING_OPTIONS)
    phases = {kind: [] for kind in KINDS}
    done = {kind: 0 for kind in KINDS}
    for rep in range(REPEATS):
        for kind, (maintenance, rate) in KINDS.items():
            paging = maintenance == "paging"
            folder = bench.folder(f"latency-{kind.replace(' ', '-').replace(',', '')}-")
            if paging:
                root = os.path.join(folder, "root")
                shutil.copytree(events_template, root)
                lane, first_id = os.path.join(root, os.path.basename(events_lane)), last + 1
                log_uri = default_log_uri(root)
            else:
                lane, first_id = os.path.join(folder, "lane"), compact_first
                shutil.copytree(compact_template, lane)
                log_uri = ""
            evict(lane)
            options = {**(PAGING_OPTIONS if paging else LATENCY_OPTIONS),
                       "maintenanceBytesPerSecond": rate}
            child = (_maintainer(maintenance, lane, node, log_uri, options)
                     if maintenance else None)
            try:
                latencies = _commits(lane, first_id, sizes["latency_commits"])
            finally:
                if child is not None:
                    ran = _stop(child, maintenance)
                    done[kind] += ran["done"]
            phases[kind] += latencies
            shutil.rmtree(folder)
            bench.log(f"writer latency run {rep + 1}/{REPEATS}, {kind}: p50 "
                      f"{_percentile(latencies, 0.5) * 1e3:.2f} ms, p99 "
                      f"{_percentile(latencies, 0.99) * 1e3:.2f} ms, max {max(latencies) * 1e3:.1f} ms"
                      + (f"; {ran['runs']} passes, {ran['done']} "
                         f"{'pages' if paging else 'compactions'}" if child is not None else ""))
    shutil.rmtree(os.path.dirname(compact_template))
    shutil.rmtree(os.path.dirname(events_template))
    return _results(phases, done)


def _results(phases: dict, done: dict) -> list:
    stats = {kind: {p: _percentile(v, f) * 1e3 for p, f in (("p50", 0.5), ("p99", 0.99), ("max", 1.0))}
             for kind, v in phases.items()}
    line = "; ".join(f"{kind}: p50 {s['p50']:.2f} ms, p99 {s['p99']:.2f} ms, max {s['max']:.1f} ms"
                     for kind, s in stats.items())
    commits = len(phases["plain"])
    limit = f"maintenanceBytesPerSecond={human_bytes(DEFAULT_RATE)} (the default)"
    plain = stats["plain"]
    results = []
    for what, kind in (("compaction", "compacting"), ("paging", "paging")):
        unit = "compactions" if what == "compaction" else "page files written"
        results += [
            BenchResult(f"writer p99 commit latency, {what} running at {limit}",
                        stats[kind]["p99"], "ms", plain["p99"], 2.0, "max_ratio",
                        f"{commits} synced 4 KiB commits per kind over {REPEATS} interleaved "
                        f"phases, the lane's files out of the page cache at the start of each; "
                        f"{unit} beside the writer: {done[kind]} at the default limit, "
                        f"{done[kind + ', no rate limit']} without; {line}"),
            BenchResult(f"writer p99 commit latency, {what} running with no rate limit",
                        stats[kind + ", no rate limit"]["p99"], "ms", plain["p99"], 0.0,
                        REPORTED, f"the same writer beside {what} whose reads and writes are "
                                  f"not paced"),
            BenchResult(f"writer longest stall, {what} running at {limit}", stats[kind]["max"],
                        "ms", plain["max"], 100.0, "max_value",
                        f"the slowest single commit (baseline: the slowest without {what})"),
        ]
    return results
