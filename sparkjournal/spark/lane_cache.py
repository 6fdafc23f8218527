"""A Python worker's open lane writers: opened on first use, kept across tasks
(Spark reuses workers, so a task pays no lane load), released when idle.

A lane has one writer, so a lane held by an idle worker is closed to everyone
else: maintenance cannot carry out its requests there (deletes, pages), nor
resolve its prepared transactions. So a writer nobody used for
``laneIdleTimeout`` is closed by a background thread, and the next task of
this worker opens a lane again (the first free one).

Crash behaviour: closing a writer between tasks loses nothing (every task's
PREPARE was synced before the task returned); a worker killed while holding a
lane releases it with its process (flock).
"""
from __future__ import annotations

import atexit
import contextlib
import dataclasses
import logging
import os
import threading
import time

from ..config import load_config
from ..events.node import node_id, resolve_root
from ..journal.journal import Journal
from ..journal.root import JournalRoot

log = logging.getLogger("sparkjournal.task")


@dataclasses.dataclass
class LaneWriter:
    journal: Journal
    node: str
    root: str
    lane: str
    idle_seconds: float
    busy: int = 0                         # tasks using it right now
    last_used: float = 0.0


_LOCK = threading.Lock()
_OPEN: dict[tuple, LaneWriter] = {}
_reaper: threading.Thread | None = None


@contextlib.contextmanager
def using(path: str, options: tuple):
    """This process's writer on ``path``'s node root, for one task."""
    key = (path, options)
    with _LOCK:
        writer = _OPEN.get(key)
        if writer is None:
            root = resolve_root(path)
            node = node_id(root)
            config = load_config(dict(options))
            journal = JournalRoot(root, config).open_writer()
            writer = _OPEN[key] = LaneWriter(journal, node, root, os.path.basename(journal.directory),
                                             config.laneIdleTimeout / 1e9)
            log.info("task writer of pid %d holds %s", os.getpid(), journal.directory)
        writer.busy += 1
    try:
        yield writer
    finally:
        with _LOCK:
            writer.busy -= 1
            writer.last_used = time.monotonic()
            _start_reaper()


def held_here(lane: str) -> Journal | None:
    """This process's open writer of the lane folder ``lane``, if it holds one."""
    with _LOCK:
        for writer in _OPEN.values():
            if os.path.abspath(writer.journal.directory) == os.path.abspath(lane):
                return writer.journal
    return None


def drop_writer(path: str, options: tuple) -> None:
    """Closes and forgets this process's writer on ``path`` (after a failure)."""
    with _LOCK:
        writer = _OPEN.pop((path, options), None)
    if writer is not None:
        _close(writer, "after a failure")


def _close(writer: LaneWriter, why: str) -> None:
    try:
        writer.journal.close()
        log.info("task writer of pid %d released %s %s", os.getpid(), writer.journal.directory, why)
    except Exception:                                   # already failed: nothing to save
        log.exception("closing the lane writer %s", writer.journal.directory)


def _start_reaper() -> None:
    global _reaper
    if _reaper is None or not _reaper.is_alive():
        _reaper = threading.Thread(target=_release_idle, name="sparkjournal-lane-reaper", daemon=True)
        _reaper.start()


def _release_idle() -> None:
    while True:
        with _LOCK:
            if not _OPEN:
                return
            now = time.monotonic()
            idle = [key for key, w in _OPEN.items()
                    if not w.busy and now - w.last_used >= w.idle_seconds]
            released = [_OPEN.pop(key) for key in idle]
            wait = min((w.idle_seconds for w in _OPEN.values()), default=1.0)
        for writer in released:
            _close(writer, f"after {writer.idle_seconds:g}s idle")
        time.sleep(min(max(wait / 4, 0.05), 1.0))


@atexit.register
def _close_all() -> None:
    with _LOCK:
        writers = list(_OPEN.values())
        _OPEN.clear()
    for writer in writers:
        _close(writer, "at exit")
