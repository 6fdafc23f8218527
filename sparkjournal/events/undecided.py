"""Undecided batches: prepared transactions the commit log has not decided,
found in the lanes visible from here (format/COMMIT_LOG.md, "Outcome of a
prepared transaction", rule 5).

An undecided transaction is invisible, and it holds its lane's stable point
(spark/stream_reader.py): every committed event after its first record waits
for the decision before a stream may read it. A batch stays undecided while
its query is stopped between its tasks' PREPAREs and its driver's decision;
if the query never returns, only ``sparkjournal abort`` ends it.

Read-only: lanes are read as readers read them (damaged files left out and
reported), no lock is taken, nothing is written.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import time

from . import event_records
from .commit_log import TxRef
from .lane_scan import read_snapshot
from .resolve import Outcome, outcome
from .visible_events import lane_event_records, node_lanes
from .xid import BatchXid

log = logging.getLogger("sparkjournal.undecided")


@dataclasses.dataclass
class HeldTx:
    """One undecided prepared transaction in one lane."""
    node: str
    lane: str
    lane_dir: str
    tx: int
    records: int
    rows: int
    bytes: int
    prepared_at_ms: int | None      # from its XID; None: written before XIDs carried it
    held_back: int                  # committed events after its first record in the lane

    @property
    def host(self) -> str:
        return self.node.rsplit("@", 1)[-1]


@dataclasses.dataclass
class UndecidedBatch:
    log: str                        # the commit log its XIDs name
    query: str
    batch: int
    epoch: int
    txs: list[HeldTx]

    @property
    def prepared_at_ms(self) -> int | None:
        """The earliest PREPARE of the batch (None if no XID says)."""
        times = [tx.prepared_at_ms for tx in self.txs if tx.prepared_at_ms is not None]
        return min(times) if times else None

    def age_s(self, now_ms: int) -> float | None:
        found = self.prepared_at_ms
        return None if found is None else max(0.0, (now_ms - found) / 1e3)

    def total(self, field: str) -> int:
        return sum(getattr(tx, field) for tx in self.txs)

    def to_json(self, now_ms: int) -> dict:
        return {"query": self.query, "batch": self.batch, "epoch": self.epoch,
                "commit_log": self.log, "prepared_at_ms": self.prepared_at_ms,
                "age_s": self.age_s(now_ms), "rows": self.total("rows"),
                "bytes": self.total("bytes"), "records": self.total("records"),
                "held_back_events": self.total("held_back"),
                "nodes": sorted({tx.node for tx in self.txs}),
                "hosts": sorted({tx.host for tx in self.txs}),
                "lanes": [dataclasses.asdict(tx) for tx in self.txs]}


def lane_undecided(lane_dir: str, node: str, journal_options: dict) -> list[tuple[BatchXid, HeldTx]]:
    """The undecided transactions of one lane, with their XIDs."""
    lane = os.path.basename(lane_dir)
    with read_snapshot(lane_dir, journal_options, skip_corrupt=True) as snapshot:
        found, firsts = [], []              # firsts: each one's first record id
        for prepared in snapshot.prepared():
            xid = BatchXid.decode(prepared.xid)
            if xid is None or not prepared.record_ids:
                continue
            if outcome(prepared.xid, TxRef(node, lane, prepared.tx_id)) is not Outcome.UNDECIDED:
                continue
            records = snapshot.prepared_records(prepared.tx_id)
            rows = sum(event_records.read_body(r.body)[0].num_rows for r in records
                       if r.user_type == event_records.EVENTS)
            found.append((xid, HeldTx(node, lane, lane_dir, prepared.tx_id, len(records), rows,
                                      sum(r.body_len for r in records),
                                      xid.prepared_at_ms or None, 0)))
            firsts.append(min(prepared.record_ids))
        if found:
            visible = [(r.record_id, event_records.read_body(r.body)[0].num_rows)
                       for r in lane_event_records(snapshot, node, lane)]
            for (_xid, held), first in zip(found, firsts):
                held.held_back = sum(rows for record_id, rows in visible if record_id > first)
        return found


def undecided_batches(path: str, journal_options: dict | None = None) -> list[UndecidedBatch]:
    """Every undecided batch with a transaction in a lane of a node root of
    ``path`` visible from here, oldest PREPARE first."""
    batches: dict[tuple, UndecidedBatch] = {}
    for lane_dir, node in node_lanes(path):
        if node is None:
            continue                      # a root without a node id holds no sink data
        for xid, held in lane_undecided(lane_dir, node, journal_options or {}):
            key = (xid.log, xid.query, xid.batch, xid.epoch)
            batches.setdefault(key, UndecidedBatch(*key, [])).txs.append(held)
    return sorted(batches.values(), key=lambda b: (b.prepared_at_ms or 0, b.query, b.batch))


_WARNED: dict[tuple[str, int], float] = {}      # (lane, tx): when this process last warned


def warn_if_hanging(lane: str, xid: BatchXid | None, tx: int, after_s: float, path: str,
                    now_ms: int | None = None) -> bool:
    """Logs a WARNING (naming the commands that show and end it) when a
    transaction of ``xid`` has been undecided longer than ``after_s``
    seconds, at most once per ``after_s`` per transaction in a process;
    True if it did."""
    if xid is None or not xid.prepared_at_ms or after_s <= 0:
        return False
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    age = (now_ms - xid.prepared_at_ms) / 1e3
    last = _WARNED.get((lane, tx))
    if age < after_s or last is not None and now_ms / 1e3 - last < after_s:
        return False
    if len(_WARNED) > 4096:
        _WARNED.clear()
    _WARNED[(lane, tx)] = now_ms / 1e3
    log.warning("batch %d of query %s has been undecided for %.0f s (tx %d in lane %s): it holds "
                "back every stream reading that lane. If its query is not coming back, see "
                "`sparkjournal transactions %s` and end it with `sparkjournal abort %s --query %s "
                "--batch %d`", xid.batch, xid.query, age, tx, lane, path, path, xid.query,
                xid.batch)
    return True
