"""What a writer does when its lane is full: ``addressFullPolicy``.

``admit(journal, where)`` is asked by the lane's writer before it appends one
unit of work (a Spark task's transaction), never in the middle of one, so a
unit is written whole or not at all; a lane can end up over its limit by at
most the units admitted while it was under (check_full, lane_size.py):

* ``PAGE``  - WRITE. The paging job catches up; the writer logs once per
  episode (until the lane is under its limit again) that the lane is over.
* ``FAIL``  - raises JournalFullError naming ``where``, the lane, its size and
  the limit. Nothing was appended.
* ``DROP``  - DROP: the caller writes nothing and counts what it dropped. Logged
  when the lane turns full, then at most every ``LOG_EVERY`` seconds.
* ``BLOCK`` - waits until the lane is no longer full, then WRITE. It logs why
  once, then every ``LOG_EVERY`` seconds. Space is freed by others while it
  waits - a compaction swap, paging, retention and deletes - and some of that
  needs the lane's writer: requests (deletes, pages) are carried out only by
  the holder of the lane, and dead files are freed only by the writer. So each
  poll carries out pending requests, picks up a compaction swap and frees dead
  files; a waiting writer never keeps the space it waits for.

Crash behaviour: nothing is appended before admission but what the requests
carried out while waiting write (each durable before its request is removed,
requests.py). A writer killed while it waits (Spark kills the Python worker of
a killed task) leaves nothing of its unit; the lane lock goes with the process.
"""
from __future__ import annotations

import logging
import threading
import time

from ..errors import JournalFullError
from .lane_requests import carry_out_all
from .lane_size import FullLane, check_full

log = logging.getLogger("sparkjournal.full")
WRITE, DROP = "write", "drop"
POLL_SECONDS = 0.5
LOG_EVERY = 30.0

_episodes: dict[tuple, float] = {}        # (lane, policy): when this process last logged it full
_episodes_lock = threading.Lock()


def admit(journal, where: str, *, poll: float = POLL_SECONDS, log_every: float = LOG_EVERY) -> str:
    """WRITE or DROP for the next unit ``where`` (e.g. "batch 3 of query q on
    host h") wants to append to ``journal``'s lane; raises JournalFullError
    under FAIL; waits under BLOCK (module doc)."""
    lane, config = journal.directory, journal.config
    full = check_full(lane, config)
    if full is None:
        _end_episode(lane)
        return WRITE
    policy = config.addressFullPolicy
    if policy == "FAIL":
        raise JournalFullError(where, full.message(), lane, full.size, full.limit)
    if policy == "PAGE":
        if _due((lane, policy), None):
            log.warning("%s; addressFullPolicy is PAGE: writing on, the paging job moves the "
                        "oldest events out (logged once until the lane is under its limit)",
                        full.message())
        return WRITE
    if policy == "DROP":
        if _due((lane, policy), log_every):
            log.warning("%s; addressFullPolicy is DROP: the events of %s and of every later "
                        "write until there is space are dropped (counted in the batch metrics)",
                        full.message(), where)
        return DROP
    wait_for_space(journal, full, where, poll=poll, log_every=log_every)
    return WRITE


def wait_for_space(journal, full: FullLane, where: str, *, poll: float = POLL_SECONDS,
                   log_every: float = LOG_EVERY) -> float:
    """Blocks until ``journal``'s lane is no longer full (BLOCK); returns the
    seconds waited. Each poll does the writer's part in freeing space."""
    started = logged = time.monotonic()
    log.warning("%s; addressFullPolicy is BLOCK: %s waits until space is freed", full.message(), where)
    while True:
        carry_out_all(journal)
        journal.refresh()
        journal.reclaim_now()
        current = check_full(journal.directory, journal.config)
        if current is None:
            waited = time.monotonic() - started
            log.warning("lane %s has space again after %.1fs: %s writes", journal.directory,
                        waited, where)
            _end_episode(journal.directory)
            return waited
        now = time.monotonic()
        if now - logged >= log_every:
            logged = now
            log.warning("%s is still waiting after %.0fs: %s", where, now - started,
                        current.message())
        time.sleep(poll)


def _due(key: tuple, every: float | None) -> bool:
    """Whether to log a lane full under a policy now: at the start of an
    episode, then every ``every`` seconds (None: only at the start)."""
    now = time.monotonic()
    with _episodes_lock:
        last = _episodes.get(key)
        if last is not None and (every is None or now - last < every):
            return False
        _episodes[key] = now
        return True


def _end_episode(lane: str) -> None:
    """The lane is under its limits: the next time it is full is a new episode."""
    with _episodes_lock:
        for key in [k for k in _episodes if k[0] == lane]:
            del _episodes[key]
