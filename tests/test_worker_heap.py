"""A sink task keeps the Python worker's cycle collection off the next task's
path (sparkjournal/spark/worker_heap.py): after the worker's first sink task
its objects are frozen out of the collector's walks, and every FULL_EVERY-th
task unfreezes and collects everything, so cyclic garbage is never kept
longer than that. Each scenario runs in a fresh interpreter (freezing is
process-wide), as a reused PySpark worker is one; a worker Spark does not
reuse is left alone. Before its batches, a sink task sets glibc's malloc
thresholds so that the batches it receives reuse the heap's freed pages
instead of faulting in fresh ones."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SETUP = """
import gc, weakref
from sparkjournal.spark import worker_heap

class Node:
    pass

def cycle():
    a, b = Node(), Node()
    a.other, b.other = b, a
    return weakref.ref(a)
"""


def _run(body: str, reused: bool = True) -> str:
    env = {k: v for k, v in os.environ.items() if k != "SPARK_REUSE_WORKER"}
    if reused:
        env["SPARK_REUSE_WORKER"] = "1"                 # as Spark starts a reused worker's daemon
    done = subprocess.run([sys.executable, "-c", SETUP + textwrap.dedent(body)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_first_sink_task_freezes_what_the_worker_holds():
    out = _run("""
        held = [Node() for _ in range(1000)]
        before = gc.get_freeze_count()
        worker_heap.after_task()
        print(before, gc.get_freeze_count() >= 1000)
    """)
    assert out == "0 True"


def test_collection_after_a_task_walks_only_what_was_made_since():
    out = _run("""
        worker_heap.after_task()
        frozen = gc.get_freeze_count()
        new = [Node() for _ in range(10)]
        gc.collect()                             # what the worker runs after each task
        print(gc.get_freeze_count() == frozen, len(gc.get_objects()) < 1000)
    """)
    assert out == "True True"


def test_cyclic_garbage_frozen_by_a_task_is_freed_by_the_next_full_collection():
    out = _run("""
        gc.disable()                             # only the worker's own collections run
        holder = [None]
        ref = cycle()
        holder[0] = ref()                        # the cycle is alive when the first task freezes
        worker_heap.after_task()
        holder[0] = None                         # now garbage, but frozen
        gc.collect()                             # the collection the worker runs after each task
        kept_after_task = ref() is not None
        for _ in range(worker_heap.FULL_EVERY - 1):
            worker_heap.after_task()
            gc.collect()
        kept_until_due = ref() is not None
        worker_heap.after_task()                 # the FULL_EVERY-th task after the first
        print(kept_after_task, kept_until_due, ref() is None)
    """)
    assert out == "True True True"


def test_a_full_collection_comes_every_full_every_tasks():
    out = _run("""
        collections = []
        gc.callbacks.append(lambda phase, info: phase == "stop" and collections.append(info["generation"]))
        gc.disable()
        for _ in range(2 * worker_heap.FULL_EVERY + 1):
            worker_heap.after_task()
        print(collections)
    """)
    assert out == "[2, 2, 2]"


def test_a_worker_spark_does_not_reuse_is_left_alone():
    out = _run("""
        held = [Node() for _ in range(1000)]
        worker_heap.after_task()
        print(gc.get_freeze_count())
    """, reused=False)
    assert out == "0"


# A sink task's use of the heap: PySpark reads each Arrow batch into a fresh bytes
# of a few MB; the task holds a dozen of them (its chunk, the appender's queue) and
# frees them oldest first; at its end it frees them all.
TASKS_OF_BATCHES = """
import collections, resource
def tasks(count):
    for _ in range(count):
        held = collections.deque()
        for i in range(50):
            held.append(bytes(2_500_000 + (i % 7) * 1000))
            if len(held) > 12:
                held.popleft()
tasks(2)                                         # the worker's first tasks
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
tasks(10)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(round(faults / (10 * 50 * 2.5)))           # page faults per MB received
"""


def _glibc() -> bool:
    import platform
    return platform.libc_ver()[0] == "glibc"


def test_received_batches_reuse_the_heap_instead_of_faulting_fresh_pages():
    if not _glibc():
        import pytest
        pytest.skip("malloc's thresholds are glibc's")
    with_thresholds = _run("print(worker_heap.before_task())\n" + TASKS_OF_BATCHES)
    adaptive = _run(TASKS_OF_BATCHES)
    set_ok, faults = with_thresholds.split("\n")
    # 256 pages make a MB: glibc's adaptive trimming faults in a good part of them again
    assert (set_ok, int(faults)) == ("True", 0), with_thresholds
    assert int(adaptive) >= 10, f"glibc's adaptive thresholds faulted {adaptive} pages per MB"

