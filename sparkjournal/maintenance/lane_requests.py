"""Carrying out lane requests (events/requests.py): the one registry of what
each kind of request does, and carrying them out at once where the lane is free.

Whoever holds a lane's writer lock carries its requests out: the Spark lane
writer before each task (spark/lane_writer.py), and ``apply_now`` here, used
by maintenance right after it submits a request: if no process holds the lane,
it opens the lane as its writer, carries out every pending request and closes
it; otherwise the holder does at its next task and readers already apply
pending deletes.
"""
from __future__ import annotations

import logging

from ..config import JournalConfig
from ..errors import JournalLockedError
from ..events import lane_deletes
from ..events.requests import carry_out, pending
from ..journal.journal import Journal
from ..journal.lock import LaneLock
from . import page_commit, page_drop

log = logging.getLogger("sparkjournal.requests")

HANDLERS = {**lane_deletes.HANDLERS, **page_commit.HANDLERS, **page_drop.HANDLERS}


def carry_out_all(journal) -> int:
    """Every pending request of ``journal``'s lane, with its writer."""
    return carry_out(journal, HANDLERS)


def apply_now(lane: str, config: JournalConfig) -> bool:
    """Carries out the lane's pending requests if no process holds the lane;
    False if one does (it will, at its next task)."""
    if not pending(lane):
        return True

    def work(journal) -> None:
        done = carry_out_all(journal)
        log.info("lane %s: carried out %d pending requests", lane, done)
    return as_free_writer(lane, config, work)


def as_free_writer(lane: str, config: JournalConfig, work) -> bool:
    """Runs ``work(journal)`` as the lane's writer if no process holds the lane
    (the open reclaims dead files); False if one does."""
    lock = LaneLock(lane)
    if not lock.try_acquire():
        return False
    try:
        journal = Journal(lane, config, lock)
    except JournalLockedError:
        return False
    except BaseException:
        lock.release()
        raise
    try:
        work(journal)
    finally:
        journal.close()
    return True
