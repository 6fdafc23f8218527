"""One commit log as this process reads it: the log, its newest view
(log_view.py) and its commit times (commit_times.py), behind the three
questions every reader and writer asks of a batch.

Staleness is safe by construction: decisions never change, so a view that
calls a transaction committed or aborted stays right; only "undecided" and
"not decided" may be stale, and those answers refresh the view first.
"""
from __future__ import annotations

from .commit_log import CommitLog, TxRef
import logging

from .commit_times import CommitTimes, CommitTimesDamage
from .log_view import LogView, LogViews

log = logging.getLogger("sparkjournal.read")


class LogState:
    def __init__(self, uri: str):
        self.log = CommitLog(uri)
        self.views = LogViews(self.log)
        self.times = CommitTimes(self.log)
        self._warned: set[str] = set()

    def view(self, refresh: bool = False) -> LogView:
        return self.views.refresh() if refresh else self.views.current()

    def outcome(self, query: str, batch: int, ref: TxRef, epoch: int = 0) -> str:
        """"committed", "aborted" or "undecided" (format/COMMIT_LOG.md)."""
        found = self.view().outcome(query, batch, ref, epoch)
        return found if found != "undecided" else \
            self.view(refresh=True).outcome(query, batch, ref, epoch)

    def done(self, query: str, batch: int) -> bool:
        """Whether a replay of the batch is skipped (it or a later one is committed)."""
        return self.log.committed_entry(query, batch) or self.view(refresh=True).done(query, batch)

    def write_epoch(self, query: str, batch: int) -> int:
        """The epoch a write of a batch that is not done takes now."""
        return self.view(refresh=True).write_epoch(query, batch)

    def committed_at_ms(self, query: str, batch: int, skip_corrupt: bool = False) -> int | None:
        """The batch's decision time: its entry's in the view, a folded batch's
        from the commit times; None for any other (the view reread first).
        A damaged commit-time segment raises CommitTimesDamage, or with
        ``skip_corrupt`` gives None, warned once per segment."""
        for refresh in (False, True):
            view = self.view(refresh)
            decision = view.decision(query, batch)
            if decision is not None:
                return decision.committed_at_ms if decision.committed else None
            if batch <= view.checkpoint.through(query):
                try:
                    return self.times.committed_at_ms(query, batch)
                except CommitTimesDamage as damage:
                    if not skip_corrupt:
                        raise
                    if str(damage) not in self._warned:
                        self._warned.add(str(damage))
                        log.warning("skipCorrupt: %s; its batches' _commit_time is null in "
                                    "this read", damage)
                    return None
        return None
