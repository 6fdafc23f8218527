"""Phase two of the two-phase commit, wherever it happens.

A prepared transaction's fate is read from the commit log's view (xid.py
names the batch; format/COMMIT_LOG.md gives the rules): COMMITTED if its
batch's decision, or the checkpoint that folded it, lists it; ABORTED if the
batch is decided without it (a losing task attempt, a batch replayed after a
driver crash) or a later batch of the query is decided (Spark decides batches
in order, so this one never will be); UNDECIDED otherwise - invisible to
readers (presumed aborted) and left prepared by writers, as the driver may
still decide it.

``resolve_lane`` turns the decided ones into COMMIT / ROLLBACK records, making
the lane self-describing. It runs in the lane's writer: at the start of every
task on the lane, in the driver for lanes it can lock, and in maintenance.
Crash behaviour: the records it writes only restate the commit log, so losing
them in a crash changes nothing; the next resolver writes them again.
"""
from __future__ import annotations

import enum
import logging

from ..journal.journal import JournalSnapshot
from .commit_log import CommitLog, TxRef
from .log_state import LogState
from .xid import BatchXid

log = logging.getLogger("sparkjournal.resolve")


class Outcome(enum.Enum):
    COMMITTED = "committed"
    ABORTED = "aborted"
    UNDECIDED = "undecided"
    FOREIGN = "foreign"          # not a transaction of this sink


_LOGS: dict[str, LogState] = {}


def shared_log(uri: str) -> LogState:
    """One LogState (its view, its bounded caches) per URI per process."""
    found = _LOGS.get(uri)
    if found is None:
        found = _LOGS.setdefault(uri, LogState(uri))
    return found


def commit_log(uri: str) -> CommitLog:
    return shared_log(uri).log


def outcome(xid_bytes: bytes, ref: TxRef) -> Outcome:
    xid = BatchXid.decode(xid_bytes)
    if xid is None:
        return Outcome.FOREIGN
    return Outcome(shared_log(xid.log).outcome(xid.query, xid.batch, ref, xid.epoch))


def prepared_outcomes(snapshot: JournalSnapshot, node: str, lane: str) -> dict[int, Outcome]:
    """{tx id: outcome} of every prepared transaction in a lane."""
    return {p.tx_id: outcome(p.xid, TxRef(node, lane, p.tx_id)) for p in snapshot.prepared()}


def resolve_lane(journal, node: str, lane: str) -> tuple[list[int], list[int], list[int]]:
    """Writes COMMIT / ROLLBACK for every decided prepared transaction of the
    lane this process writes. Returns (committed, rolled back, still pending)."""
    committed, aborted, pending = [], [], []
    for tx_id, fate in prepared_outcomes(journal, node, lane).items():
        if fate is Outcome.COMMITTED:
            journal.commit(tx_id, sync=False)
            committed.append(tx_id)
        elif fate is Outcome.ABORTED:
            journal.rollback(tx_id, sync=False)
            aborted.append(tx_id)
        else:
            pending.append(tx_id)
    if committed or aborted:
        log.info("lane %s of node %s: committed tx %s, rolled back tx %s as the commit log "
                 "decided", lane, node, committed, aborted)
    return committed, aborted, pending
