"""One maintenance pass over one lane of events, on the node that holds it: what
``sparkjournal compact`` and ``jobs/compact.py`` run for every lane.

1. retention (retention.py) submits the lane's expired records for deletion;
2. the sweep: if no process holds the lane, open it as its writer, write the
   COMMIT / ROLLBACK records the commit log has decided for its prepared
   transactions (events/resolve.py: left by workers that went away), and carry
   out its pending requests; a lane with a live writer is left to it;
3. paging (paging.py) when the lane or its root is over its size limit and
   ``addressFullPolicy`` is PAGE: the oldest events move into page files;
4. compaction (compactor.py, deletion vectors applied), online: it runs beside
   a live writer.

``page_pass`` is the sweep and paging (``sparkjournal page``, jobs/page.py).

Idempotent: a second pass right after the first finds nothing to do. Crash
behaviour: each step's own (see those modules); a pass killed anywhere leaves a
lane the next pass finishes.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import time

from ..config import JournalConfig
from ..events.requests import pending
from ..events.resolve import resolve_lane
from ..events.undecided import warn_if_hanging
from ..events.xid import BatchXid
from .compactor import CompactionReport, compact_lane
from .lane_requests import as_free_writer, carry_out_all
from .paging import PagingReport, page_lane
from .retention import RetentionReport, apply_retention

log = logging.getLogger("sparkjournal.maintenance")


@dataclasses.dataclass
class LaneReport:
    lane: str
    node: str | None
    retention: RetentionReport | None = None
    swept: bool = False                   # the lane was free and is resolved, requests done
    committed: int = 0                    # prepared transactions the sweep committed
    rolled_back: int = 0
    requests_done: int = 0
    requests_pending: int = 0             # left for the lane's live writer
    paging: PagingReport | None = None
    compaction: CompactionReport | None = None
    seconds: float = 0.0
    error: str | None = None

    def line(self) -> str:
        if self.error:
            return f"{self.lane}: FAILED: {self.error}"
        parts = []
        full = self.compaction is not None      # a full pass, not paging alone
        if self.node is not None:               # lanes of events: swept when free
            parts.append(f"swept: {self.committed} committed, {self.rolled_back} rolled back, "
                         f"{self.requests_done} requests carried out" if self.swept else
                         f"a live writer holds it ({self.requests_pending} requests left to it)")
        if self.retention is not None and self.retention.records:
            parts.append(self.retention.line().split(": ", 1)[1])
        if self.paging is not None and (not full or self.paging.paged or self.paging.pages_pending
                                        or self.paging.pages_dropped or self.paging.drops_pending):
            parts.append(self.paging.line().split(": ", 1)[1])
        if self.compaction is not None:
            parts.append(self.compaction.line().split(": ", 1)[1])
        return f"{self.lane}: " + "; ".join(parts) + f" ({self.seconds:.2f}s)"


def maintain_lane(lane: str, node: str | None, log_uri: str, config: JournalConfig, *,
                  force: bool = False, now: float | None = None) -> LaneReport:
    def steps(report: LaneReport) -> None:
        report.retention = apply_retention(lane, node, log_uri, config, now)
        _sweep(lane, node, config, report)
        report.paging = page_lane(lane, node, log_uri, config)
        report.compaction = compact_lane(lane, config, force=force, events=True)
    return run_steps(lane, node, steps)


def page_pass(lane: str, node: str | None, log_uri: str, config: JournalConfig, *,
              force: bool = False) -> LaneReport:
    """The sweep, then paging: a lane over its limits (or every lane with
    ``force``) pages; the sweep first makes decided transactions committed
    records, which paging can move."""
    def steps(report: LaneReport) -> None:
        _sweep(lane, node, config, report)
        report.paging = page_lane(lane, node, log_uri, config, force=force)
    return run_steps(lane, node, steps)


def run_steps(lane: str, node: str | None, steps) -> LaneReport:
    started = time.monotonic()
    report = LaneReport(lane, node)
    try:
        steps(report)
    except Exception as error:          # noqa: BLE001 - reported per lane; the job exits 1
        report.error = f"{type(error).__name__}: {error}"
        log.exception("maintenance of %s failed", lane)
    report.seconds = time.monotonic() - started
    log.info("%s", report.line())
    return report


def _warn_hanging(journal, lane: str, pending_txs: list[int], config: JournalConfig) -> None:
    """A WARNING for each of ``pending_txs`` (undecided) prepared longer ago
    than undecidedWarnAfter (events/undecided.py)."""
    for prepared in journal.prepared():
        if prepared.tx_id in pending_txs:
            warn_if_hanging(lane, BatchXid.decode(prepared.xid), prepared.tx_id,
                            config.undecidedWarnAfter / 1e9, os.path.dirname(lane))


def _sweep(lane: str, node: str | None, config: JournalConfig, report: LaneReport) -> None:
    def sweep(journal) -> None:
        if node is not None:
            committed, rolled_back, pending_txs = resolve_lane(journal, node,
                                                               os.path.basename(lane))
            report.committed, report.rolled_back = len(committed), len(rolled_back)
            _warn_hanging(journal, lane, pending_txs, config)
        report.requests_done = carry_out_all(journal)
        journal.flush()
    report.swept = as_free_writer(lane, config, sweep)
    if not report.swept:                  # a live writer carries them out at its next task
        report.requests_pending = len(pending(lane))
