"""The view of a commit log: its newest readable checkpoint plus the entries
after it (format/COMMIT_LOG.md, "The view").

Planning costs what the live state costs: one listing of ``_checkpoints/``,
one of the log's folder, one of each writer's folder (which retention keeps
to a few hundred entries), the entries decided since the checkpoint - never
every entry ever written. A view is immutable; ``LogViews``
keeps the newest per log and builds the next one from it (a new checkpoint is
parsed once; entries already read are kept).

Crash and race behaviour: a checkpoint is complete or absent (written whole,
then linked); one that does not parse is reported and the previous one stands
in, with the entries after it (retention keeps those). Retention deletes only
entries a newer checkpoint covers, so a build that finds a newer checkpoint
when it is done starts again from it.
"""
from __future__ import annotations

import dataclasses
import logging
import threading

from ..format.constants import PATHS
from ..format.strict_json import WHOLE
from .commit_log import CommitLog, CommitLogError, Decision, TxRef
from .forgotten import read_forgotten
from .log_checkpoint import Checkpoint, CheckpointDamage, parse

log = logging.getLogger("sparkjournal.commitlog")

CHECKPOINTS = PATHS.CHECKPOINTS
ONE_SHOT_PREFIX = "batch-write-"
ROUNDS = 16      # DataSource batch writes: one batch, 0, per query


@dataclasses.dataclass(frozen=True)
class LogView:
    checkpoint: Checkpoint
    checkpoint_name: str | None                       # None: no checkpoint (every entry)
    entries: dict                  # query -> {batch: its latest Decision}, past through
    forgotten: dict = dataclasses.field(default_factory=dict)   # node -> ForgottenNode

    def decision(self, query: str, batch: int) -> Decision | None:
        """The batch's latest entry in the view (commit or abort), None if none."""
        return self.entries.get(query, {}).get(batch)

    def last_committed(self, query: str) -> int:
        """The query's last committed batch in this view, -1 if none
        (COMMIT_LOG.md: an abort entry does not count)."""
        after = self.entries.get(query, {})
        committed = [batch for batch, entry in after.items() if entry.committed]
        return max(committed) if committed else self.checkpoint.through(query)

    def decided_count(self, query: str) -> int:
        """How many batches of the query are committed (folded ones included)."""
        folded = self.checkpoint.queries.get(query)
        return (folded.decided if folded else 0) + sum(
            entry.committed for entry in self.entries.get(query, {}).values())

    def queries(self) -> list[str]:
        return sorted(set(self.checkpoint.queries) | set(self.entries))

    def outcome(self, query: str, batch: int, ref: TxRef, epoch: int = 0) -> str:
        """"committed", "aborted" or "undecided" of a transaction prepared at
        ``epoch`` of the batch (COMMIT_LOG.md's rules 1-5)."""
        latest = self.decision(query, batch)
        if latest is not None and latest.epoch == epoch:
            return "committed" if latest.committed and ref in latest.tx_refs() else "aborted"
        if latest is not None and latest.epoch > epoch:
            return "aborted"
        if batch <= self.checkpoint.through(query):
            lane = self.checkpoint.lanes.get((ref.node, ref.lane))
            return "committed" if lane is not None and lane.commits(ref.tx) else "aborted"
        return "aborted" if self.last_committed(query) > batch else "undecided"

    def done(self, query: str, batch: int) -> bool:
        """A replay of this batch is skipped: it, or a later batch, is committed."""
        return batch <= self.last_committed(query)

    def write_epoch(self, query: str, batch: int) -> int:
        """The epoch a new write of the batch takes: one past its latest
        entry's if that is an abort entry, else 0."""
        latest = self.decision(query, batch)
        return latest.epoch + 1 if latest is not None and latest.aborted else 0

    def aborted(self) -> list[Decision]:
        """The abort entries in the view that no commit has passed: batches
        an operator aborted that their query has not written again."""
        return [entry for query, entries in sorted(self.entries.items())
                for batch, entry in sorted(entries.items()) if entry.aborted]


def checkpoint_names(commit_log: CommitLog) -> list[str]:
    """Checkpoint file names, newest first: a seq of exactly 20 ASCII digits,
    at most 2^63-1, then ".json" (COMMIT_LOG.md); any other name is ignored."""
    names = [i.base_name for i in commit_log.list_names(f"{commit_log.base}/{CHECKPOINTS}")]
    return sorted((n for n in names if len(n) == 25 and n.endswith(".json") and n[:20].isascii()
                   and n[:20].isdigit() and int(n[:20]) <= WHOLE), reverse=True)


def newest_checkpoint(commit_log: CommitLog, names: list[str],
                      known: tuple[str, Checkpoint] | None = None) -> tuple[str | None, Checkpoint]:
    """The newest checkpoint (``known`` reused if it is that one); if it is
    damaged, the one just before it (seq - 1: retention keeps every entry
    after that one), with a warning; the empty state if there is none, or
    if the damaged one is seq 0. CheckpointDamage when the fallback is damaged
    or missing too: entries it would need may be gone."""
    damaged = []
    for name in names:
        if known is not None and known[0] == name:
            return known
        path = f"{commit_log.base}/{CHECKPOINTS}/{name}"
        raw = commit_log.read_bytes(path)
        if raw is None:
            continue                                  # deleted by retention meanwhile
        seq = int(name[:-5])
        if damaged and seq != damaged[-1][0] - 1:
            break
        try:
            found = name, parse(raw, path, seq)
        except CheckpointDamage as damage:
            damaged.append((seq, damage))
            if len(damaged) == 2:
                break
            continue
        if damaged:
            log.warning("%s; reading the previous checkpoint and the entries after it instead "
                        "(the next checkpoint replaces it)", damaged[0][1])
        return found
    if not damaged or damaged[0][0] == 0 and len(damaged) == 1:
        if damaged:
            log.warning("%s; reading every entry instead", damaged[0][1])
        return None, Checkpoint()
    raise CheckpointDamage(f"{'; '.join(str(d) for _s, d in damaged)}; no readable checkpoint "
                           f"just before it: restore {CHECKPOINTS}/ from a backup (entries it "
                           f"covered may have been deleted by retention)")


def entries_after(commit_log: CommitLog, checkpoint: Checkpoint, known: dict) -> dict:
    """{query: {batch: Decision}} of the entries past the checkpoint (module doc),
    reusing ``known``'s decisions."""
    found: dict[str, dict[int, Decision]] = {}
    for query in commit_log.queries():
        through = checkpoint.through(query)
        if query.startswith(ONE_SHOT_PREFIX) and through >= 0:
            continue
        have = known.get(query, {})
        for batch, epoch in commit_log.entry_keys(query).items():
            if batch <= through:
                continue
            decision = have.get(batch)
            if decision is None or decision.epoch != epoch:
                decision = commit_log.decision(query, batch, epoch)
            if decision is not None:                  # listed, then gone: retention's
                found.setdefault(query, {})[batch] = decision
    return found


def build(commit_log: CommitLog, previous: LogView | None = None) -> LogView:
    known = (previous.checkpoint_name, previous.checkpoint) if previous and \
        previous.checkpoint_name else None
    entries = previous.entries if previous else {}
    names = checkpoint_names(commit_log)
    for _round in range(ROUNDS):
        name, checkpoint = newest_checkpoint(commit_log, names, known)
        entries = entries_after(commit_log, checkpoint, entries)
        again = checkpoint_names(commit_log)
        if again[:1] == names[:1]:
            return LogView(checkpoint, name, entries, read_forgotten(commit_log))
        names = again
    raise CommitLogError(f"commit log {commit_log.uri}: a newer checkpoint appeared during each "
                         f"of {ROUNDS} reads of its view, so none could be read whole; retry, and "
                         f"if it persists raise commitLogCheckpointInterval of its writers")


class LogViews:
    """The newest view of one log, refreshed on demand; thread-safe."""

    def __init__(self, commit_log: CommitLog):
        self.commit_log = commit_log
        self._view: LogView | None = None
        self._lock = threading.Lock()

    def current(self) -> LogView:
        """The last view built (building the first)."""
        view = self._view
        return view if view is not None else self.refresh()

    def refresh(self) -> LogView:
        with self._lock:
            self._view = build(self.commit_log, self._view)
            return self._view
