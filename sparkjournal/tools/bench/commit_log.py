"""``sparkjournal bench commit-log``: planning against the commit log's age.

One log grows through the driver's own write path (``BatchCommitter.commit``:
the decision, then its checkpointer every ``commitLogCheckpointInterval``
batches, then retention) to 1,000, 10,000, 100,000 and 1,000,000 decided
batches of one query, 4 tasks per batch in 4 lanes (``--quick``: 1,000 and
10,000). The entries are written without fsync while the log grows (said in
every row); the timed commits below are durable. Retention runs at
``commitLogRetainTime=0s`` (the default keeps an hour of entries; a log built
in minutes would keep all of them), ``commitLogRetainBatches`` at its default.

At each size, the log's part of every planner, after the checkpointer has
caught up (the steady state of a stream):

* Python batch read, cold: a new process's first plan (a fresh ``LogState``:
  the checkpoint parsed, entries after it read) - ``committed_lanes``;
* Python batch read, warm: the same in a process that planned before;
* Python stream trigger: one batch decided since the last trigger, then the
  trigger's two plans (``driver_lanes`` twice);
* JVM cold and warm: ``CommittedLane.of`` the view of a new and of the
  shared ``CommitLog`` (the JVM stream's and batch read's planning), in one JVM,
  after JVM_WARM_UP untimed plans at each size (so the first size is not
  measured before the JIT compiled the planner).

Rows ``planning ... at N batches``: the rate at N over the rate at 1,000 in the
same run (target >= 0.67). ``driver commit p99 beside checkpointing``: durable
commits at the largest size with the checkpointer on, against the same with
``commitLogCheckpointInterval=0``, interleaved, one commit every 20 ms (target
<= 1.1x; back to back, where every checkpoint overlaps a commit, reported). Bytes on disk
and the JVM's heap after a GC are reported.

A benchmark, never a test: nothing here asserts a time.
"""
from __future__ import annotations

import os
import shutil
import statistics
import time

from ...config import load_config
from ...events.committed_lanes import committed_lanes
from ...events.log_state import LogState
from ...events.resolve import shared_log
from ...maintenance.log_checkpointer import Checkpointer
from ...spark.committer import BatchCommitter, BatchMetrics
from ...spark.task_message import TaskMessage
from ...units import human_bytes
from .report import REPORTED, BenchResult, print_report, skipped
from .support import bench_log, work_folder

SIZES = (1_000, 10_000, 100_000, 1_000_000)
QUICK = (1_000, 10_000)
TASKS = 4
QUERY = "bench-query"
REPEATS = 15
COMMITS = 300
JVM_WARM_UP = 300
CADENCE = 0.02
TARGET = 0.67
clock = time.perf_counter


def messages(batch: int) -> list[TaskMessage]:
    return [TaskMessage(QUERY, batch, "bench-node@bench-host", "bench-host", "/not-here",
                        f"lane-{task:03d}", batch + 1, 2, 10_000, 400_000, task, 0, 1.0, 1.0, 0, 0)
            for task in range(TASKS)]


class LogBench:
    def __init__(self, path: str, options: dict):
        self.committer = BatchCommitter(path, options)
        self.uri = self.committer.log_uri
        self.next = 0

    def commit(self) -> float:
        started = clock()
        batch = self.next
        if not self.committer.is_committed(QUERY, batch):
            self.committer.commit(QUERY, batch, messages(batch), BatchMetrics(QUERY, batch))
        self.next += 1
        return clock() - started

    def grow_to(self, count: int) -> None:
        log = self.committer.log
        log.durable = False
        try:
            while self.next < count:
                self.commit()
                if self.next % 100_000 == 0:
                    bench_log(f"{self.next:,} decided batches")
        finally:
            log.durable = True
        self.settle()

    def settle(self) -> None:
        """Waits for the checkpointer, then checkpoints once more (as the next
        decision would): the steady state every size is measured in."""
        self.committer.checkpointer.wait()
        self.committer.checkpointer.after_decision(1 << 62)
        self.committer.checkpointer.wait()


def median_seconds(action, repeats: int = REPEATS) -> float:
    times = []
    for _ in range(repeats):
        started = clock()
        action()
        times.append(clock() - started)
    return statistics.median(times)


def python_planners(bench: LogBench) -> dict:
    shared = shared_log(bench.uri)
    committed_lanes(shared)

    def trigger():
        bench.committer.log.durable = False
        bench.commit()
        bench.committer.log.durable = True
        started = clock()
        committed_lanes(shared)
        committed_lanes(shared)
        return clock() - started
    triggers = statistics.median(trigger() for _ in range(REPEATS))
    return {"Python batch read, cold": median_seconds(lambda: committed_lanes(LogState(bench.uri)), 5),
            "Python batch read, warm": median_seconds(lambda: committed_lanes(shared)),
            "Python stream trigger": triggers}


def jvm_planners(jvm, bench: LogBench) -> dict:
    events = jvm.io.sparkjournal.events
    shared = events.Resolver.shared().commitLog(bench.uri)
    for _ in range(JVM_WARM_UP):            # JIT-compiled before the first size is timed
        events.CommittedLane.of(events.CommitLog(bench.uri).view())
    return {"JVM plan, cold": median_seconds(
                lambda: events.CommittedLane.of(events.CommitLog(bench.uri).view()), 5),
            "JVM plan, warm": median_seconds(lambda: events.CommittedLane.of(shared.view()))}


def disk_bytes(folder: str) -> int:
    total = 0
    for where, _dirs, files in os.walk(folder):
        for name in files:
            total += os.stat(os.path.join(where, name)).st_blocks * 512
    return total


def jvm_heap(jvm) -> int:
    runtime = jvm.java.lang.Runtime.getRuntime()
    jvm.java.lang.System.gc()
    return runtime.totalMemory() - runtime.freeMemory()


def commit_p99(bench: LogBench, log) -> list[BenchResult]:
    """Durable commits with the driver's checkpointer and with one that never
    checkpoints (commitLogCheckpointInterval=0), interleaved in blocks of 50:
    one commit every CADENCE seconds (a stream of 50 batches a second, faster
    than Spark's own per-batch floor), and back to back."""
    on = bench.committer.checkpointer
    off = Checkpointer(bench.committer.log, load_config(
        {"commitLogCheckpointInterval": 0, "commitLogRetainTime": "0s"}))
    results = []
    for cadence in (CADENCE, 0.0):
        times = {True: [], False: []}
        try:
            for block in range(COMMITS // 50):
                for checkpointing in ((True, False) if block % 2 == 0 else (False, True)):
                    bench.committer.checkpointer = on if checkpointing else off
                    for _ in range(50):
                        time.sleep(cadence)
                        times[checkpointing].append(bench.commit())
        finally:
            bench.committer.checkpointer = on
        bench.settle()
        with_, without = (sorted(times[k])[int(len(times[k]) * 0.99) - 1] * 1e3
                          for k in (True, False))
        paced = f"one commit every {cadence * 1e3:.0f} ms" if cadence else "back to back"
        log(f"commit p99, {paced}: {with_:.2f} ms with the checkpointer, {without:.2f} ms without")
        results.append(BenchResult(
            f"driver commit p99 beside checkpointing, {paced}", with_, "ms", without, 1.1,
            "max_ratio" if cadence else REPORTED,
            f"{len(times[True])} durable commits each way, interleaved in blocks of 50, on "
            f"the log at its largest size, checkpoints every 100 batches; p50 "
            f"{statistics.median(times[True]) * 1e3:.2f} vs "
            f"{statistics.median(times[False]) * 1e3:.2f} ms"))
    return results


def run(args) -> int:
    sizes = QUICK if args.quick else SIZES
    work = work_folder(args.dir, "sparkjournal-bench-commit-log-", 8 << 30)
    path = os.path.join(work, "journal")
    os.makedirs(path)
    log = bench_log
    jvm, missing = None, ""
    try:
        from .jvm import JvmBench
        session = JvmBench("local[1]", "sparkjournal-bench-commit-log", log)
        missing = session.missing
        jvm = None if missing else session.spark._jvm
    except Exception as error:                    # noqa: BLE001 - the JVM rows say why
        missing = f"no JVM: {error}"
    try:
        bench = LogBench(path, {"commitLogRetainTime": "0s"})
        measured, results = {}, []
        for count in sizes:
            started = clock()
            bench.grow_to(count)
            log(f"{count:,} decided batches in {clock() - started:.1f} s")
            planners = python_planners(bench)
            if jvm is not None:
                planners.update(jvm_planners(jvm, bench))
            measured[count] = planners
            on_disk = disk_bytes(os.path.join(path, "_commits"))
            heap = f", JVM heap after GC {human_bytes(jvm_heap(jvm))}" if jvm is not None else ""
            log(f"at {count:,}: " + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in planners.items())
                + f"; commit log {human_bytes(on_disk)} on disk{heap}")
            results.append(BenchResult(f"commit log on disk at {count:,} batches", on_disk / 2**20,
                                       "MiB", None, 0.0, REPORTED,
                                       f"entries, checkpoints and commit times{heap}"))
        first = sizes[0]
        for count in sizes[1:]:
            for planner, seconds in measured[count].items():
                base = measured[first][planner]
                results.append(BenchResult(
                    f"planning, {planner}, at {count:,} batches", 1 / seconds, "plans/s",
                    1 / base, TARGET, "ratio",
                    f"{seconds * 1e3:.2f} ms per plan vs {base * 1e3:.2f} ms at {first:,} batches "
                    f"(medians); entries of the older batches written without fsync"))
        if jvm is None:
            results.append(skipped("planning, JVM", "plans/s", TARGET, missing))
        results += commit_p99(bench, log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print_report(results, args.json)
    return 0
