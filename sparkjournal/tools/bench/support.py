"""What the journal benchmark measures against, and how it reports.

* ``raw_sync_seconds``: the disk's raw limit, the C loop sj_raw_sync_loop
  (O_DIRECT pwrite of a reused aligned buffer + fdatasync per write) into a
  freshly pre-created zero-filled file -- the state the journal's own data files
  start in -- in the benchmark's folder, so on the same disk as the journal.
* ``group_floor_commits_per_second``: the least a group commit fed by Python
  threads can cost (sj_group_floor.c). Both C floors are the extension
  _sjfloors, built beside the C core and never into it.
* ``crc_files_seconds``: the load baseline, the C core's CRC over mapped files.
* ``run_cases``: what every disk benchmark does around its cases.
"""
from __future__ import annotations

import itertools
import mmap
import os
import shutil
import sys
import tempfile
import threading
import time

from ...config import JournalConfig
from ...errors import JournalIOError, NativeUnavailableError, UsageError
from ...io.device import block_device_of
from ...io.files_io import create_zero_filled
from ...units import human_bytes
from .report import print_report

try:
    from ..._sjnative import ffi as core_ffi, lib as core
except ImportError:          # no C core: the journal benchmark refuses to run (no load baseline)
    core_ffi = core = None
try:
    from ._sjfloors import ffi, lib as floors
except ImportError:          # no floors: the journal benchmark refuses to run (no raw baseline)
    ffi = floors = None

_raw_files = itertools.count()


def require_native() -> None:
    missing = [name for name, module in (("sparkjournal._sjnative (the C core)", core),
                                         ("sparkjournal.tools.bench._sjfloors (the C floors)",
                                          floors)) if module is None]
    if missing:
        raise NativeUnavailableError(
            f"the journal benchmark needs its baselines in C, and {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not built; reinstall sparkjournal with a "
            f"C compiler (or run `python native/build_native.py` in a checkout)")


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
        done = floors.sj_raw_sync_loop(path.encode(), bytes_per_write, writes, 1, seconds)
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
    floor = floors.sj_group_floor_open(path.encode(), JournalConfig.bufferSize, block, flushers,
                                     error)
    if floor == ffi.NULL:
        os.unlink(path)
        raise JournalIOError(error[0], f"the group-commit floor could not open {path}: "
                                       f"{os.strerror(error[0])}")

    def committer(_index: int) -> None:
        for _ in range(per_thread):
            done = floors.sj_group_floor_commit(floor, record, len(record))
            if done < 0:
                raise JournalIOError(-done, f"the group-commit floor failed on {path}: "
                                            f"{os.strerror(-done)}")
    try:
        return threads * per_thread / threads_seconds(threads, committer)
    finally:
        floors.sj_group_floor_close(floor)
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
            with core_ffi.from_buffer(data) as view:
                core.sj_crc32c(0, view, len(view))
    return clock() - started


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
