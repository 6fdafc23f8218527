"""Keeps the Python worker's cycle collection off the sink's path.

A reused PySpark worker runs a full ``gc.collect()`` after every task
(pyspark/daemon.py). A sink task leaves its lane's writer open in the worker
(lane_cache.py) beside pyspark's and pyarrow's own objects, some 80,000 that
the collector walks each time: 25-90 ms on this machine's loaded cores, on
the critical path of the micro-batch after it (the next task waits for the
worker) and in the CPU the other task needs.

``after_task`` (called by each sink task once it has its commit message)
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
"""
from __future__ import annotations

import gc
import os

FULL_EVERY = 64
REUSE_ENV = "SPARK_REUSE_WORKER"
_sink_tasks = 0


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
