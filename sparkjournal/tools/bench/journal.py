"""``sparkjournal bench journal``: the journal against the disk's raw limit,
measured in one run, in one folder (so on one disk), and printed as ratios.

Honesty rules every case follows:
* the raw loop (support.raw_sync_seconds) writes the same bytes per sync
  the journal writes: a record of a B-byte body is align8(40 + B) bytes, padded
  to the 512-byte block, so a 4 KiB commit writes 4608 bytes and a 64 KiB one
  66048;
* both start from the same file state: a freshly pre-created zero-filled file
  (the journal's data files are pre-created by the same function), sized so no
  file is created or rolled inside a timed loop;
* the machine is shared and noisy, so every measurement runs ``REPEATS`` times,
  interleaved (raw, ASYNCIO, NIO, JVM, raw, ...); the table shows medians, and a
  ratio is the median of the per-round ratios (each round measures baseline
  and journal back to back: the machine's slow and fast spells, which last
  longer than one round, hit both sides of a round alike);
* only the measured calls are inside the clock: opening, creating files and
  closing are not, a final flush is;
* the JVM rows (commit_4k, throughput_64k, arrow_10k) time LaneAppender, the
  default sink's writer, in a child JVM that runs one untimed loop of the
  case's size first and stays up for the case's rounds (jvm_append.py), so
  the JVM's start and the JIT's warm-up are outside the clock; it times its
  own loop of appends (nothing else), and each round still runs the raw loop
  beside it. Without a jar or a JDK they are skipped rows saying why.
A benchmark, never a test: nothing here asserts a time. MISS rows are facts.
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import shutil
import tempfile
import time

import pyarrow as pa

from ...format import layout
from ...journal.batch import ipc_bytes
from ...journal.journal import Journal
from ...units import human_bytes
from . import jvm_append
from .report import REPORTED, BenchResult, Rounds, skipped
from .support import (crc_files_seconds, group_floor_commits_per_second, raw_sync_seconds,
                      require_native, run_cases, threads_seconds)

REPEATS = 5                  # interleaved rounds per case: single rounds differ by ±10 % here
BACKENDS = ("ASYNCIO", "NIO")
BLOCK = 512                                  # the journal's deviceBlockSize default
MIB = 1 << 20
clock = time.perf_counter

FULL = {"commits": 3000, "records_64k": 1000, "arrow_batches": 24, "one_writer": 2000,
        "per_thread": 1000, "small_records": 1_000_000, "load_bytes": 1 << 30}
QUICK = {"commits": 150, "records_64k": 40, "arrow_batches": 3, "one_writer": 150,
         "per_thread": 40, "small_records": 100_000, "load_bytes": 32 * MIB}


def sync_bytes(body_len: int) -> int:
    """Bytes one single-record commit writes: the record, padded to the block."""
    return layout.align_up(layout.record_size(body_len), BLOCK)


def file_size_for(nbytes: int) -> int:
    return layout.align_up(nbytes + layout.FILE_HEADER_SIZE + MIB, MIB)


JVM_DETAIL = ("LaneAppender (the JVM sink's writer) in a warm child JVM (TimedAppends), {}, "
              "the loop timed in the JVM")


class Bench:
    def __init__(self, directory: str, sizes: dict, log):
        self.directory, self.sizes, self.log = directory, sizes, log

    def journal(self, backend: str, **options) -> Journal:
        lane = tempfile.mkdtemp(prefix="lane-", dir=self.directory)
        return Journal.open(lane, journalType=backend, **options)

    @staticmethod
    def discard(journal: Journal) -> None:
        journal.close()
        shutil.rmtree(journal.directory)

    def interleaved(self, label: str, runs: dict) -> Rounds:
        """Runs every {name: function} REPEATS times, interleaved."""
        return Rounds.run(runs, REPEATS, self.log, label)

    @functools.cached_property
    def jvm_missing(self) -> str:
        """Why the JVM appender cannot be measured here ("" when it can)."""
        reason = jvm_append.missing()
        self.log(f"no JVM appender: {reason}" if reason else "JVM appender: the connector's jar")
        return reason

    @contextlib.contextmanager
    def with_jvm(self, runs: dict, body: bytes, count: int, file_size: int, value):
        """While the block runs, ``runs`` holds the JVM appender as contender
        jvm_append.LABEL: ``value(seconds)`` of ``count`` durable appends of
        ``body`` into a lane of ``file_size``-byte files, timed in a warm child JVM;
        nothing is added where there is no JVM appender."""
        if self.jvm_missing:
            yield
            return
        with jvm_append.TimedAppends(self.directory, body, count, file_size) as child:
            runs[jvm_append.LABEL] = lambda: value(child.seconds())
            yield

    def jvm_row(self, rounds: Rounds, case: str, unit: str, target: float, detail: str):
        """The JVM appender's row of ``case`` against the raw loop, or its skipped row."""
        name = f"{case} {jvm_append.LABEL}"
        if self.jvm_missing:
            return skipped(name, unit, target, f"no JVM appender: {self.jvm_missing}")
        return rounds.result(name, jvm_append.LABEL, "raw", unit, target, detail=detail)


# --- durable single-record commits, one writer ------------------------------------------------
def timed_commits(bench: Bench, backend: str, body: bytes, count: int, file_size: int) -> float:
    journal = bench.journal(backend, fileSize=file_size, minFiles=1)
    try:
        started = clock()
        for record_id in range(1, count + 1):
            journal.append_add(record_id, body, sync=True)
        return clock() - started
    finally:
        bench.discard(journal)


def case_commit_4k(bench: Bench) -> list:
    count, body = bench.sizes["commits"], os.urandom(4096)
    per_sync = sync_bytes(len(body))
    size = file_size_for(count * per_sync)
    runs = {"raw": lambda: count / raw_sync_seconds(bench.directory, per_sync, count, size)}
    for backend in BACKENDS:
        runs[backend] = lambda b=backend: count / timed_commits(bench, b, body, count, size)
    with bench.with_jvm(runs, body, count, size, lambda seconds: count / seconds):
        rounds = bench.interleaved("commit_4k (commits/s)", runs)
    raw = f"raw: O_DIRECT pwrite+fdatasync of {per_sync} B per sync"
    return [rounds.result(f"commit_4k {b}", b, "raw", "commits/s", 0.85, detail=(
        f"{count} durable 4 KiB commits, one writer; {raw}")) for b in BACKENDS] + [
        bench.jvm_row(rounds, "commit_4k", "commits/s", 0.85, JVM_DETAIL.format(
            f"{count} durable 4 KiB appends (appendAdd, sync true)") + f"; {raw}")]


def case_throughput_64k(bench: Bench) -> list:
    count, body = bench.sizes["records_64k"], os.urandom(64 << 10)
    per_sync = sync_bytes(len(body))
    size = file_size_for(count * per_sync)
    runs = {"raw": lambda: count * per_sync / raw_sync_seconds(bench.directory, per_sync, count, size) / 1e6}
    for backend in BACKENDS:
        runs[backend] = lambda b=backend: count * len(body) / timed_commits(bench, b, body, count, size) / 1e6
    with bench.with_jvm(runs, body, count, size, lambda seconds: count * len(body) / seconds / 1e6):
        rounds = bench.interleaved("throughput_64k (MB/s)", runs)
    return [rounds.result(f"throughput_64k {b}", b, "raw", "MB/s", 0.80, detail=(
        f"{count} records of 64 KiB, one sync each (payload MB/s); raw: {per_sync} B per sync"))
        for b in BACKENDS] + [bench.jvm_row(rounds, "throughput_64k", "MB/s", 0.90, JVM_DETAIL.format(
            f"{count} records of 64 KiB, one sync each (payload MB/s)") + f"; raw: {per_sync} B per sync")]


def event_batch(rows: int) -> pa.RecordBatch:
    """10k events: int64 id, timestamp, 16-char key, 200-char payload, double."""
    ids = list(range(rows))
    return pa.record_batch({
        "id": pa.array(ids, pa.int64()),
        "ts": pa.array([1_700_000_000_000_000 + i for i in ids], pa.timestamp("us")),
        "key": pa.array([f"key-{i:012d}" for i in ids], pa.string()),
        "payload": pa.array([(f"event {i} " * 30)[:200] for i in ids], pa.string()),
        "value": pa.array([i * 0.5 for i in ids], pa.float64()),
    })


def case_arrow_batches(bench: Bench) -> list:
    count, batch = bench.sizes["arrow_batches"], event_batch(10_000)
    ipc = ipc_bytes(batch).to_pybytes()       # the JVM appender's body: the same IPC bytes
    ipc_len = len(ipc)
    per_sync = sync_bytes(ipc_len)               # the record written alone, padded to the block
    size = file_size_for(count * per_sync)

    def journal_run(backend: str) -> float:
        journal = bench.journal(backend, fileSize=size, minFiles=1)
        try:
            started = clock()
            for _ in range(count):
                journal.append_batch([batch], sync=True)
            return count * ipc_len / (clock() - started) / 1e6
        finally:
            bench.discard(journal)

    runs = {"raw": lambda: count * per_sync / raw_sync_seconds(
        bench.directory, per_sync, count, layout.align_up(count * per_sync, MIB)) / 1e6}
    for backend in BACKENDS:
        runs[backend] = lambda b=backend: journal_run(b)
    with bench.with_jvm(runs, ipc, count, size, lambda seconds: count * ipc_len / seconds / 1e6):
        rounds = bench.interleaved("arrow_10k (MB/s)", runs)
    return [rounds.result(f"arrow_10k {b}", b, "raw", "MB/s", 0.80, detail=(
        f"{count} Arrow batches of 10k events ({human_bytes(ipc_len)} IPC each, a record larger "
        f"than the write buffer), one durable append_batch each; raw: {per_sync} B per sync"))
        for b in BACKENDS] + [bench.jvm_row(rounds, "arrow_10k", "MB/s", 0.90, JVM_DETAIL.format(
            f"{count} records of the same batch's Arrow IPC bytes ({human_bytes(ipc_len)}, written "
            f"alone), one durable appendAdd each; the IPC bytes are made once before the clock (in "
            f"the sink EventsBodyWriter makes them before the appender is called)")
            + f"; raw: {per_sync} B per sync")]


# --- group commit: 8 threads against one writer -----------------------------------------------
def case_threads(bench: Bench) -> list:
    one, per_thread, threads, body = bench.sizes["one_writer"], bench.sizes["per_thread"], 8, os.urandom(1024)
    size = file_size_for(max(one, threads * per_thread) * sync_bytes(len(body)))

    def many(backend: str) -> float:
        journal = bench.journal(backend, fileSize=size, minFiles=1)

        def writer(index: int) -> None:
            first = 1 + index * per_thread
            for record_id in range(first, first + per_thread):
                journal.append_add(record_id, body, sync=True)
        try:
            return threads * per_thread / threads_seconds(threads, writer)
        finally:
            bench.discard(journal)

    runs = {}
    for backend in BACKENDS:
        runs[f"{backend} 1"] = lambda b=backend: one / timed_commits(bench, b, body, one, size)
        runs[f"{backend} 8"] = lambda b=backend: many(b)
    record = bytes(layout.record_size(len(body)))
    for flushers in (1, 2):
        runs[f"floor {flushers}"] = lambda f=flushers: group_floor_commits_per_second(
            bench.directory, record, threads, per_thread, size, BLOCK, f)
    rounds = bench.interleaved("threads_8x1k (commits/s)", runs)
    results = [rounds.result(f"threads_8x1k {b}", f"{b} 8", f"{b} 1", "commits/s", 4.0, detail=(
        f"8 threads x {per_thread} durable 1 KiB commits vs one writer ({one} commits)"))
        for b in BACKENDS]
    for flushers in (1, 2):
        results.append(rounds.result(
            f"threads_8x1k floor, {flushers} sync{'s' if flushers > 1 else ''} in flight",
            f"floor {flushers}", "ASYNCIO 1", "commits/s", 0.0, REPORTED,
            "the same 8 Python threads through a minimal C group commit "
            "(native/floors/sj_group_floor.c: no records, no journal state, no Python after the "
            "call, flusher threads that never need the GIL) vs the journal's one ASYNCIO writer: what the 4x target can get from "
            "Python threads on this machine"))
    return results


# --- the batch call -----------------------------------------------------------------------------
def case_batch_100b(bench: Bench) -> list:
    count = bench.sizes["small_records"]
    data = pa.py_buffer(os.urandom(100) * count)
    offsets = pa.array(range(0, 100 * (count + 1), 100), pa.int32()).buffers()[1]
    bodies = pa.Array.from_buffers(pa.binary(), count, [None, offsets, data])
    file_size = 64 * MIB
    files = math.ceil(count * layout.record_size(100) / (file_size - layout.FILE_HEADER_SIZE - 490 * 1024)) + 1

    def run(backend: str) -> float:
        journal = bench.journal(backend, fileSize=file_size, minFiles=files)
        try:
            started = clock()
            journal.append_batch(bodies, sync=False)
            journal.flush()
            return count / (clock() - started)
        finally:
            bench.discard(journal)

    rounds = bench.interleaved("batch_100b (records/s)", {b: (lambda b=b: run(b)) for b in BACKENDS})
    return [BenchResult(f"batch_100b {b}", rounds.median(b), "records/s", None, 2_000_000, "value",
                        f"append_batch of a pyarrow binary array of {count:,} 100-byte bodies, then "
                        f"flush; {files} data files of 64 MiB pre-created") for b in BACKENDS]


# --- loading ------------------------------------------------------------------------------------
def case_load(bench: Bench) -> list:
    record = 64 << 10
    count = bench.sizes["load_bytes"] // record
    journal = bench.journal("AUTO")
    lane, body = journal.directory, os.urandom(record)
    try:
        for first in range(1, count + 1, 64):
            journal.append_batch([body] * min(64, count + 1 - first), first_record_id=first, sync=False)
        journal.flush()
    finally:
        journal.close()
    paths = [os.path.join(lane, n) for n in sorted(os.listdir(lane)) if n.endswith(".sjd")]
    total = sum(os.path.getsize(p) for p in paths)
    crc_files_seconds(paths, clock)              # warm the page cache: both read it from memory

    def load_run() -> float:
        started = clock()
        snapshot = Journal.read(lane)
        elapsed = clock() - started
        loaded = len(snapshot)
        snapshot.close()
        if loaded != count:
            raise AssertionError(f"the benchmark journal loaded {loaded} records, wrote {count}")
        return total / elapsed / 1e9

    rounds = bench.interleaved("load (GB/s)", {"crc32c": lambda: total / crc_files_seconds(paths, clock) / 1e9,
                                               "Journal.read": load_run})
    shutil.rmtree(lane)
    medians = rounds.medians()
    return [BenchResult("load Journal.read", medians["Journal.read"], "GB/s", medians["crc32c"], 1.0, "value",
                        f"{human_bytes(total)} in {len(paths)} files of 10 MiB, {count} records of "
                        f"64 KiB, from the page cache; baseline: mmap + CRC-32C of the same files")]


CASES = {"commit_4k": case_commit_4k, "throughput_64k": case_throughput_64k,
         "arrow_10k": case_arrow_batches, "threads_8x1k": case_threads,
         "batch_100b": case_batch_100b, "load": case_load}


def run(args) -> int:
    require_native()
    sizes = QUICK if args.quick else FULL
    return run_cases(args, CASES, sizes, "sparkjournal-bench-", sizes["load_bytes"] * 1.2 + 512 * MIB,
                     Bench)
