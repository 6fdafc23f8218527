"""What the journal benchmark measures against, and how it reports.

* ``raw_sync_seconds``: the disk's raw limit, the C loop sj_raw_sync_loop
  (O_DIRECT pwrite of a reused aligned buffer + fdatasync per write) into a
  freshly pre-created zero-filled file -- the state the journal's own data files
  start in -- in the benchmark's folder, so on the same disk as the journal.
* ``Rounds``: contenders measured in interleaved rounds (each round runs every
  contender once, back to back), their medians and their paired ratios.
* ``BenchResult`` and ``render_table``: one row per measurement, the target
  either a ratio to the baseline or an absolute value.
"""
from __future__ import annotations

import dataclasses
import json
import itertools
import mmap
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time

from ..config import JournalConfig
from ..errors import JournalIOError, NativeUnavailableError
from ..io.files_io import create_zero_filled
from .device import block_device_of
from .paths import UsageError
from .units import human_bytes

try:
    from sparkjournal._sjnative import ffi, lib
except ImportError:          # no C core: the benchmark refuses to run (no raw baseline)
    ffi = lib = None

_raw_files = itertools.count()


def require_native() -> None:
    if lib is None or not hasattr(lib, "sj_raw_sync_loop"):
        raise NativeUnavailableError(
            "the journal benchmark needs the C core's raw baseline (sj_raw_sync_loop in "
            "sparkjournal._sjnative), which is not built; reinstall sparkjournal with a C compiler")


def selected(cases: dict, only: str | None) -> dict:
    """The cases whose name contains ``only`` (all without it); UsageError if none."""
    chosen = {name: case for name, case in cases.items() if not only or only in name}
    if not chosen:
        raise UsageError(f"--only {only!r} matches no case (cases: {', '.join(cases)})")
    return chosen


def bench_log(text: str) -> None:
    """A benchmark's progress line (stderr, so the report on stdout stays clean)."""
    print(f"bench: {text}", file=sys.stderr, flush=True)


def work_folder(directory: str | None, prefix: str, need: float) -> str:
    """A new folder in ``directory`` (--dir; default the system temp dir) on a
    disk with about ``need`` bytes free; the caller removes it."""
    if directory and not os.path.isdir(directory):
        raise UsageError(f"--dir {directory} is not an existing folder")
    work = tempfile.mkdtemp(prefix=prefix, dir=directory)
    if shutil.disk_usage(work).free < need:
        shutil.rmtree(work)
        raise UsageError(f"the benchmark needs about {human_bytes(need)} free in {work}")
    return work


def raw_sync_seconds(directory: str, bytes_per_write: int, writes: int, file_size: int) -> float:
    """Seconds the C loop takes for ``writes`` O_DIRECT writes of ``bytes_per_write``
    bytes, each followed by fdatasync, into a new zero-filled file of
    ``file_size`` bytes (it wraps to offset 0 at the end). The file is removed."""
    require_native()
    path = os.path.join(directory, f".sj-bench-raw-{os.getpid()}-{next(_raw_files)}.dat")
    create_zero_filled(path, file_size, b"")
    try:
        seconds = ffi.new("double *")
        done = lib.sj_raw_sync_loop(path.encode(), bytes_per_write, writes, 1, seconds)
        if done < 0:
            raise JournalIOError(-done, f"the raw sync loop on {path} failed: {os.strerror(-done)}")
        return seconds[0]
    finally:
        os.unlink(path)


def group_floor_commits_per_second(directory: str, record: bytes, threads: int, per_thread: int,
                                   file_size: int, block: int, flushers: int) -> float:
    """Commits/s of ``threads`` Python threads each committing ``record``
    ``per_thread`` times through the group-commit floor (sj_group_floor.c),
    into a fresh zero-filled file of ``file_size`` bytes (removed after),
    writes padded to ``block`` bytes, buffers of the journal's default bufferSize,
    ``flushers`` syncs in flight at most."""
    require_native()
    path = os.path.join(directory, f".sj-bench-floor-{os.getpid()}.dat")
    create_zero_filled(path, file_size, b"")
    error = ffi.new("int *")
    floor = lib.sj_group_floor_open(path.encode(), JournalConfig.bufferSize, block, flushers,
                                     error)
    if floor == ffi.NULL:
        os.unlink(path)
        raise JournalIOError(error[0], f"the group-commit floor could not open {path}: "
                                       f"{os.strerror(error[0])}")

    def committer(_index: int) -> None:
        for _ in range(per_thread):
            done = lib.sj_group_floor_commit(floor, record, len(record))
            if done < 0:
                raise JournalIOError(-done, f"the group-commit floor failed on {path}: "
                                            f"{os.strerror(-done)}")
    try:
        return threads * per_thread / threads_seconds(threads, committer)
    finally:
        lib.sj_group_floor_close(floor)
        os.unlink(path)


def threads_seconds(threads: int, work) -> float:
    """Seconds from the moment ``threads`` threads, each running ``work(its
    index)``, are released together until the last one ends; the first error
    any of them raised is raised here (after all ended)."""
    gate, errors = threading.Barrier(threads + 1), []

    def run(index: int) -> None:
        gate.wait()
        try:
            work(index)
        except BaseException as error:  # noqa: BLE001 - raised in the caller's thread below
            errors.append(error)
    workers = [threading.Thread(target=run, args=(index,)) for index in range(threads)]
    for worker in workers:
        worker.start()
    gate.wait()
    started = time.perf_counter()
    for worker in workers:
        worker.join()
    seconds = time.perf_counter() - started
    if errors:
        raise errors[0]
    return seconds


def crc_files_seconds(paths: list, clock) -> float:
    """Seconds to map and CRC-32C every byte of ``paths`` (the load baseline)."""
    require_native()
    started = clock()
    for path in paths:
        with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            with ffi.from_buffer(data) as view:
                lib.sj_crc32c(0, view, len(view))
    return clock() - started


class Rounds:
    """The values of contenders measured in interleaved rounds.

    The machine is shared: a slow spell slows every contender of the round it
    falls in, so a ratio is taken within each round and the median of those is
    reported (``paired``); the median of each contender's own values
    (``median``) is what the table shows as value and baseline."""

    def __init__(self, values: dict[str, list[float]]):
        self.values = values

    @classmethod
    def run(cls, measures: dict, repeats: int, log=None, label: str = "") -> "Rounds":
        """Runs every {name: measure} (a function returning the measured value)
        ``repeats`` times, interleaved; logs each round when ``log`` is given.
        Each round starts one contender further on (A B C, B C A, C A B, ...), so
        none always runs right after the same other one and pays for what it
        left behind (a JVM's garbage, a disk's writeback)."""
        values = {name: [] for name in measures}
        names = list(measures)
        for round_ in range(repeats):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                values[name].append(measures[name]())
            if log:
                log(f"{label} run {round_ + 1}/{repeats}: " +
                    ", ".join(f"{name} {v[-1]:,.1f}" for name, v in values.items()))
        return cls(values)

    def median(self, name: str) -> float:
        return statistics.median(self.values[name])

    def medians(self) -> dict[str, float]:
        return {name: self.median(name) for name in self.values}

    def paired(self, name: str, baseline: str) -> float:
        """The median over the rounds of name's value / baseline's value."""
        return statistics.median(v / b for v, b in zip(self.values[name], self.values[baseline]))

    def result(self, title: str, name: str, baseline: str, unit: str, target: float,
               target_of: str = "ratio", detail: str = "") -> "BenchResult":
        """The row of ``name`` against ``baseline``: their medians and the paired ratio."""
        return BenchResult(title, self.median(name), unit, self.median(baseline), target, target_of,
                           detail, self.paired(name, baseline))


REPORTED = "reported"        # BenchResult.target_of of a figure with no target


@dataclasses.dataclass
class BenchResult:
    name: str
    value: float
    unit: str
    baseline: float | None       # measured in the same run; None for absolute targets
    target: float
    target_of: str               # "ratio": ratio >= target; "value": value >= target;
    #                              "max_ratio" / "max_value": at most the target (latencies);
    #                              "reported": a figure shown beside the targets, none itself
    detail: str = ""
    paired: float | None = None  # the median of per-round ratios, where rounds pair the two

    @property
    def ratio(self) -> float | None:
        """The paired ratio where the case measured one (each round ran the
        baseline and the contender back to back, so slow and fast spells of a
        shared machine cancel out), else value / baseline."""
        if self.paired is not None:
            return self.paired
        return self.value / self.baseline if self.baseline else None

    @property
    def reported(self) -> bool:
        return self.target_of == REPORTED

    @property
    def passed(self) -> bool | None:
        """Whether the target is met; None for a reported figure (no target)."""
        if self.reported:
            return None
        measured = self.ratio if self.target_of in ("ratio", "max_ratio") else self.value
        if measured is None:
            return False
        return measured <= self.target if self.target_of.startswith("max_") else measured >= self.target

    def as_json(self) -> dict:
        return {"name": self.name, "value": round(self.value, 3), "unit": self.unit,
                "baseline": None if self.baseline is None else round(self.baseline, 3),
                "ratio": None if self.ratio is None else round(self.ratio, 4),
                "ratio_of": "median of per-round ratios" if self.paired is not None
                else "value / baseline",
                "target": None if self.reported else self.target, "target_of": self.target_of,
                "pass": self.passed, "detail": self.detail}


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def render_table(results: list) -> str:
    rows = [("name", "value", "unit", "baseline", "ratio", "target", "")]
    for r in results:
        bound = "<=" if r.target_of.startswith("max_") else ">="
        target = ("-" if r.reported else f"{bound} {r.target:g}x" if r.target_of.endswith("ratio")
                  else f"{bound} {_number(r.target)}")
        rows.append((r.name, _number(r.value), r.unit, _number(r.baseline),
                     "-" if r.ratio is None else f"{r.ratio:.2f}", target,
                     "" if r.reported else "PASS" if r.passed else "MISS"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) if i < 5 else cell.ljust(width)
                                             for i, (cell, width) in enumerate(zip(row[1:], widths[1:]), 1)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


def print_report(results: list, json_path: str | None, footer: str = "") -> None:
    """The table, each result's detail, the count of targets met; and the JSON
    list (name, value, unit, baseline, ratio, target) to ``json_path`` if given."""
    print(render_table(results))
    for result in results:
        if result.detail:
            print(f"  {result.name}: {result.detail}")
    targets = [r for r in results if not r.reported]
    print(f"\n{sum(r.passed for r in targets)} of {len(targets)} targets met{footer}")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as handle:
            json.dump([r.as_json() for r in results], handle, indent=2)
            handle.write("\n")


def run_cases(args, cases: dict, sizes: dict, prefix: str, need: float, make_bench) -> int:
    """What every disk benchmark does around its cases: picks them (--only),
    makes the work folder (--dir) and removes it, runs each case on
    ``make_bench(work, sizes, log)``, then prints the report (--json) with the
    device measured."""
    chosen = selected(cases, args.only)
    work = work_folder(args.dir, prefix, need)
    device = block_device_of(work)
    log = bench_log
    log(f"measuring in {work} (device {device.name or '-'}, write cache {device.write_cache}); "
        f"{'quick sizes' if args.quick else 'full sizes'}, interleaved runs")
    bench, results = make_bench(work, sizes, log), []
    try:
        for case in chosen.values():
            results += case(bench)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print_report(results, args.json, f"; device {device.name or '-'}, write cache {device.write_cache}")
    return 0
