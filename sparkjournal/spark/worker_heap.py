"""Keeps the Python worker's heap management off the sink's path: its cycle
collection, and malloc handing freed pages back to the kernel.

A reused PySpark worker runs a full ``gc.collect()`` after every task
(pyspark/daemon.py). A sink task leaves its lane's writer open in the worker
(lane_cache.py) beside pyspark's and pyarrow's own objects, some 80,000 that
the collector walks each time: 25-90 ms on this machine's loaded cores, on
the critical path of the micro-batch after it (the next task waits for the
worker) and in the CPU the other task needs.

``after_task`` (called by each executor sink task, lane_writer.executor_task,
once it has its commit message)
moves the worker's surviving objects into the collector's permanent
generation (``gc.freeze``) on the worker's first sink task and every
``FULL_EVERY``-th after it, each time after a full collection of everything
(``gc.unfreeze``, then ``gc.collect``). Between those, the collection after
a task walks only what was made since. Nothing is freed later than that: an
object's memory still goes when its last reference does; only cyclic
garbage among frozen objects waits for the next full collection, at most
``FULL_EVERY`` sink tasks away. A worker that dies simply takes its heap with
it.

A worker Spark does not reuse (``spark.python.worker.reuse=false``: no
``SPARK_REUSE_WORKER`` in its environment, as pyspark/daemon.py reads it)
exits after its task without a collection: nothing is done there.

``before_task`` (called by the same before it takes its batches) sets
glibc malloc's thresholds once per worker. PySpark reads each Arrow batch
from the JVM into a fresh ``bytes`` of a few MB, and a sink task holds
several such batches at once (the chunk it gathers, the chunks queued for
its appender: lane_writer.py). With glibc's adaptive defaults the heap's
freed top is handed back to the kernel once over twice the largest freed
block (~5 MB), so every task, and often every chunk, faulted and zeroed
fresh pages for about half the bytes it received (32k page faults per
million 250-byte rows here, against 3k for a task that only counts them).
Blocks up to ``MMAP_THRESHOLD`` now come from the heap and up to
``TRIM_THRESHOLD`` of its freed top is kept for the next batches: a worker
keeps at most that much memory it already used. Elsewhere than glibc (musl,
macOS) nothing is done.
"""
from __future__ import annotations

import ctypes
import gc
import os
import platform

FULL_EVERY = 64
REUSE_ENV = "SPARK_REUSE_WORKER"
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3            # mallopt parameters, <malloc.h>
MMAP_THRESHOLD = 32 << 20        # glibc's own ceiling for its adaptive threshold
TRIM_THRESHOLD = 64 << 20        # above what a task holds: chunk, queue, the one appending
_sink_tasks = 0
_malloc_set: bool | None = None  # None: not tried in this process; else whether glibc took it


def before_task() -> bool:
    """A sink task is about to take its batches (module doc); whether glibc's
    malloc thresholds are in effect in this process."""
    global _malloc_set
    if _malloc_set is None:
        _malloc_set = False
        if platform.libc_ver()[0] == "glibc":
            mallopt = ctypes.CDLL(None).mallopt
            _malloc_set = bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
                bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
    return _malloc_set


def after_task() -> None:
    """A sink task in this worker is done with its batches (module doc)."""
    global _sink_tasks
    if not os.environ.get(REUSE_ENV):
        return
    if _sink_tasks % FULL_EVERY == 0:
        gc.unfreeze()
        gc.collect()
        gc.freeze()
    _sink_tasks += 1
