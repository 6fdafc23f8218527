"""One commit log as this process reads it: the log, its newest view
(log_view.py) and its commit times (commit_times.py), behind the three
questions every reader and writer asks of a batch.

Staleness is safe by construction: decisions never change, so a view that
calls a transaction committed or aborted stays right; only "undecided" and
"not decided" may be stale, and those answers refresh the view first.
"""
from __future__ import annotations

from .commit_log import CommitLog, TxRef
from .commit_times import CommitTimes
from .log_view import LogView, LogViews


class LogState:
    def __init__(self, uri: str):
        self.log = CommitLog(uri)
        self.views = LogViews(self.log)
        self.times = CommitTimes(self.log)

    def view(self, refresh: bool = False) -> LogView:
        return self.views.refresh() if refresh else self.views.current()

    def outcome(self, query: str, batch: int, ref: TxRef) -> str:
        """"committed", "aborted" or "undecided" (format/COMMIT_LOG.md)."""
        found = self.view().outcome(query, batch, ref)
        return found if found != "undecided" else self.view(refresh=True).outcome(query, batch, ref)

    def done(self, query: str, batch: int) -> bool:
        """Whether a replay of the batch is skipped (it or a later one is decided)."""
        return self.log.entry_exists(query, batch) or self.view(refresh=True).done(query, batch)

    def committed_at_ms(self, query: str, batch: int) -> int | None:
        """The batch's decision time: its entry's in the view, a folded batch's
        from the commit times; None for any other (the view reread first)."""
        for refresh in (False, True):
            view = self.view(refresh)
            decision = view.decision(query, batch)
            if decision is not None:
                return decision.committed_at_ms
            if batch <= view.checkpoint.through(query):
                return self.times.committed_at_ms(query, batch)
        return None
