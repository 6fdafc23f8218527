"""Maintenance below the writers' CPU priority. A compaction or paging pass is
CPU work (scanning and checksumming a lane, encoding records, writing
Parquet); on a node with few cores it holds a core when the lane's writer
wakes from a sync, and the writer's commit then waits for the scheduler - up
to a tick (4 ms here), since Linux lets the running thread finish its slice
- instead of for the disk. So a pass runs in a thread of its own at the
priority ``maintenancePriority`` names (Linux keeps a policy and a nice value
per thread, and the threads a pass starts inherit them); the calling thread -
a Spark worker's, a user's - keeps its own:

* IDLE: ``SCHED_IDLE``: any other thread that wakes takes the core at once. On
  a node whose cores are always busy the pass gets only a sliver of a core
  and runs that much longer.
* LOW: nice 10: shares the cores at a lower weight; a waking writer may wait
  up to a tick.
* NORMAL: the caller's priority, in the caller's thread.

Lowering a thread's priority needs no privilege; where it is refused the pass
runs at the priority it has.

Crash behaviour: none of its own; the pass's thread dies with its process.
"""
from __future__ import annotations

import os
import threading
from typing import Callable, TypeVar

T = TypeVar("T")
LOW_NICE = 10


def run_at(priority: str, action: Callable[[], T], name: str = "sparkjournal-maintenance") -> T:
    """``action()`` at ``priority`` (IDLE, LOW or NORMAL); returns its result or
    raises what it raised."""
    if priority == "NORMAL":
        return action()
    outcome: dict = {}

    def body() -> None:
        _lower(priority)
        try:
            outcome["result"] = action()
        except BaseException as error:   # handed to the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=body, name=name)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _lower(priority: str) -> None:
    """Lowers the calling thread to ``priority`` as far as it is allowed."""
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, max(LOW_NICE, os.getpriority(os.PRIO_PROCESS, tid)))
        if priority == "IDLE":
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (OSError, AttributeError):        # refused, or not Linux: as it is
        pass
