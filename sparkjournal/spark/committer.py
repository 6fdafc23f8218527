"""The driver's half of the two-phase commit, shared by the foreachBatch sink and
the DataSource writers.

``commit(query, batch, messages)``, called once every task of the batch
succeeded, with exactly the commit messages Spark handed back (one per winning
task attempt):

1. writes the batch's decision to the commit log - the commit point;
2. then writes COMMIT (and ROLLBACK for the lane's other decided transactions)
   into every lane it can reach now: the root is visible here with the same
   node id, and no live process holds the lane. Lanes held by executor workers
   are resolved by their holder at its next task, by readers and maintenance.

Crash behaviour: killed before 1, nothing of the batch is visible and Spark
replays it; the replay's tasks write new transactions and the old ones are
aborted once the replay's decision exists without them. Killed after 1, the
batch is committed: the replay finds the decision and skips.

The decision is created exclusively: if an operator's abort entry
(``sparkjournal abort``) took its name first, ``commit`` raises
BatchAbortedError and nothing of this run of the batch becomes visible; the
query's restart writes the batch again at the next epoch.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import time

from ..errors import LockSupportError
from ..faults import crash_point
from ..format.constants import ENTRY_TX as TX
from ..config import load_config
from ..journal.journal import Journal
from ..journal.lock import LaneLock
from ..events.commit_log import BatchAbortedError, CommitLog, Decision, default_log_uri  # noqa: F401
from ..events.node import read_node_id, resolve_root
from ..io.modes import use_config_modes
from ..journal.inside import check_inside
from ..events.resolve import resolve_lane, shared_log
from ..maintenance.log_checkpointer import for_log as checkpointer_for
from .lane_cache import held_here
from .schema import evolve
from .task_message import TaskMessage

log = logging.getLogger("sparkjournal.commit")



@dataclasses.dataclass
class BatchMetrics:
    query: str
    batch: int
    skipped: bool = False
    rows: int = 0
    bytes: int = 0
    records: int = 0
    tasks: int = 0
    lanes: list = dataclasses.field(default_factory=list)     # "host:root/lane"
    job_ms: float = 0.0          # the Spark job that ran the tasks (includes the two below)
    write_ms: float = 0.0        # slowest task's append time
    prepare_ms: float = 0.0      # slowest task's PREPARE sync
    commit_log_ms: float = 0.0
    commit_records_ms: float = 0.0
    lanes_committed_now: int = 0
    dropped_rows: int = 0        # rows tasks dropped into full lanes (addressFullPolicy DROP)
    dropped_lanes: list = dataclasses.field(default_factory=list)
    on_driver: bool = False      # a small batch the driver wrote (sink.py, smallBatchRows)
    tasks_because: str = ""      # why tasks wrote it though smallBatchRows is on (sink.py)
    jvm: bool = False            # JVM tasks wrote it (sink.py: writer "jvm", or "auto" took it)
    through_format: bool = False  # a Connect server's format("sparkjournal") write did (sink.py)

    def line(self) -> str:
        if self.skipped:
            return f"batch {self.batch} of query {self.query}: already committed, skipped"
        source = ("the driver" if self.on_driver
                  else f"{self.tasks} tasks of the server's format('sparkjournal') write"
                  if self.through_format
                  else f"{self.tasks} {'JVM tasks' if self.jvm else 'tasks'}")
        if self.tasks_because:
            source += f" ({self.tasks_because})"
        return (f"batch {self.batch} of query {self.query}: {self.rows} rows, {self.bytes} bytes, "
                f"{self.records} records from {source} into {len(self.lanes)} lanes; "
                f"job {self.job_ms:.1f} ms (write {self.write_ms:.1f}, PREPARE sync "
                f"{self.prepare_ms:.1f}), commit log {self.commit_log_ms:.1f} ms, COMMIT "
                f"records {self.commit_records_ms:.1f} ms ({self.lanes_committed_now} lanes now)"
                + (f"; {self.dropped_rows} rows DROPPED: lanes full ({', '.join(self.dropped_lanes)}; "
                   f"addressFullPolicy DROP)" if self.dropped_rows else ""))

    def count_written(self, txs: list[dict]) -> None:
        """Rows, bytes, records and lanes (``host:root/lane``) of the decided
        transactions ``txs`` (commit_log.Decision.txs)."""
        self.rows = sum(int(t.get(TX.ROWS, 0)) for t in txs)
        self.bytes = sum(int(t.get(TX.BYTES, 0)) for t in txs)
        self.records = sum(int(t.get(TX.RECORDS, 0)) for t in txs)
        self.lanes = sorted({f"{t.get(TX.HOST, t[TX.NODE])}:{t.get(TX.ROOT, '')}/{t[TX.LANE]}"
                             for t in txs})

    def log_to(self, logger: logging.Logger) -> None:
        """The batch's line: a warning when rows were dropped, else info."""
        (logger.warning if self.dropped_rows else logger.info)(self.line())


def check_log_location(path: str, log_uri: str) -> None:
    """A commit log on a local path under the journal root (the default
    ``_commits``) must stay inside it (inside.py): no link leads it out. A log
    elsewhere (fault-tolerant storage, a URI) is the user's explicit choice."""
    if "://" in log_uri:
        return
    root = resolve_root(path)
    named = os.path.normpath(os.path.abspath(log_uri))
    if named == root or named.startswith(root.rstrip(os.sep) + os.sep):
        check_inside(root, named, "commitLog")


class BatchCommitter:
    def __init__(self, path: str, options: dict, log_uri: str | None = None):
        self.path = path
        self.options = dict(options)
        self.config = load_config(self.options)
        use_config_modes(resolve_root(path), self.config)
        self.log_uri = log_uri or default_log_uri(path)
        check_log_location(path, self.log_uri)
        self.shared = shared_log(self.log_uri)
        self.log: CommitLog = self.shared.log
        self.checkpointer = checkpointer_for(self.log, self.config)
        self._schema = None                         # the last batch schema accepted

    def is_committed(self, query: str, batch: int) -> bool:
        """Whether a replay of the batch is skipped: it, or a later batch of
        the query, is decided (format/COMMIT_LOG.md: batches are decided in order)."""
        return self.shared.done(query, batch)

    def check_schema(self, arrow_schema, where: str) -> None:
        """Fails on an incompatible schema; stores an evolved one."""
        incoming = arrow_schema.remove_metadata()
        if self._schema is not None and incoming.equals(self._schema):
            return                                  # as the last batch: accepted then
        stored = self.log.read_schema()
        evolved = evolve(stored, incoming, where)
        if evolved is not None:
            self.log.write_schema(evolved)
        self._schema = incoming

    def commit(self, query: str, batch: int, messages: list[TaskMessage],
               metrics: BatchMetrics) -> Decision:
        """Records the decision of the tasks' ``messages``; a message without a
        tx (its rows were dropped into a full lane) counts in the metrics only."""
        started = time.perf_counter()
        epoch = self.write_epoch(query, batch, messages)
        dropped = [m for m in messages if m.tx is None]
        messages = [m for m in messages if m.tx is not None]
        crash_point("commit:before-decision")          # every task prepared, nothing decided
        decision = self.log.record(query, batch, [m.decided() for m in messages], epoch)
        logged = time.perf_counter()
        metrics.lanes_committed_now = self.commit_reachable(messages)
        metrics.commit_log_ms = (logged - started) * 1e3
        metrics.commit_records_ms = (time.perf_counter() - logged) * 1e3
        past = sum(map(len, self.shared.view().entries.values())) + 1   # + this decision
        self.checkpointer.after_decision(past)
        metrics.count_written(decision.txs)
        metrics.tasks = len(messages) + len(dropped)
        metrics.dropped_rows = sum(m.dropped for m in dropped)
        metrics.dropped_lanes = sorted({m.where for m in dropped})
        metrics.write_ms = max((m.write_ms for m in messages), default=0.0)
        metrics.prepare_ms = max((m.prepare_ms for m in messages), default=0.0)
        return decision

    def write_epoch(self, query: str, batch: int, messages: list[TaskMessage]) -> int:
        """The epoch the batch's commit entry takes: the one every task wrote
        at (format/COMMIT_LOG.md). Tasks at different epochs mean an operator's
        abort landed while they ran: the batch fails, and its restart writes
        it again at the next epoch."""
        epochs = sorted({m.epoch for m in messages})
        if len(epochs) > 1:
            raise BatchAbortedError(
                f"batch {batch} of query {query} was aborted by an operator (sparkjournal "
                f"abort) while its tasks ran (they wrote at epochs {epochs}): this run's data "
                f"of the batch stays invisible. Restart the query: Spark replays the batch and "
                f"the sink writes it again")
        return epochs[0] if epochs else self.shared.view(refresh=True).write_epoch(query, batch)

    def commit_reachable(self, messages: list[TaskMessage]) -> int:
        """Resolves the lanes of ``messages`` that this process can lock now."""
        done = 0
        for node, root, lane in sorted({(m.node, m.root, m.lane) for m in messages}):
            if read_node_id(root) != node:
                continue                         # another node's root: its holder resolves it
            directory = os.path.join(root, lane)
            held = held_here(directory)
            if held is not None:                 # this process wrote it (a small batch): at once
                resolve_lane(held, node, lane)
                held.flush()
                done += 1
                continue
            lock = LaneLock(directory)
            try:
                if not lock.try_acquire():
                    continue                     # a live writer holds it and will resolve it
            except LockSupportError as refused:  # only a JVM writer may write here
                log.warning("lane %s: %s; its next writer or reader resolves it from the "
                            "commit log", directory, refused)
                continue
            try:
                journal = Journal(directory, self.config, lock)
            except Exception:
                lock.release()
                log.exception("cannot open lane %s to write its COMMIT records; its next "
                              "writer or reader resolves it from the commit log", directory)
                continue
            try:
                resolve_lane(journal, node, lane)
                journal.flush()
                done += 1
            finally:
                journal.close()
        return done
