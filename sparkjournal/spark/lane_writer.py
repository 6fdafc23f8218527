"""Phase one of the two-phase commit, in an executor task.

A task writes its partition's Arrow batches into a lane of its node's root as
the records of ONE transaction, closes it with a PREPARE (XID: query, batch,
commit log; see xid.py) synced before the task returns, and returns its commit
message naming the transaction (task_message.TaskMessage). Nothing of it is visible until the
driver's decision lists it (resolve.py).

The records are appended by a thread of the task (journal/pipelined_append.py)
in chunks of ``APPEND_CHUNK`` bytes while the task takes its next Arrow
batches from Spark, splits and tags them; the PREPARE follows the last chunk.

A Python worker process keeps its lane open across tasks (Spark reuses workers),
so a task pays no lane load; before writing, it resolves whatever the commit
log has decided for the lane's earlier prepared transactions, reloads its state
if a compaction swapped the lane's files, and carries out the requests
maintenance left for the lane (deletes, pages: maintenance/lane_requests.py).
Then it asks whether the lane is full (maintenance/full_policy.py): under
addressFullPolicy FAIL the task fails with JournalFullError, under DROP it
writes nothing and its message counts the rows it dropped (``dropped``; ``tx``
is null), under BLOCK it waits for space first, under PAGE it writes.

Crash behaviour: killed before the PREPARE is durable, the transaction is open
and is rolled back when the lane is next opened; killed after, it stays
prepared and the commit log decides it. A task that fails rolls back its
unprepared transaction at once.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import socket
import time

import pyarrow as pa

from ..errors import JournalFullError, SparkJournalError, TransactionError
from ..journal.journal import Journal
from ..journal.pipelined_append import PipelinedAppend
from ..maintenance.full_policy import DROP, admit
from ..maintenance.lane_requests import carry_out_all
from . import worker_heap
from .lane_cache import drop_writer, using
from ..events import event_records
from ..events.resolve import commit_log, resolve_lane, shared_log
from ..events.forgotten import ForgottenNodeError, refuse_forgotten_root
from ..events.xid import BatchXid
from .task_message import MESSAGE_SCHEMA, TaskIdentity, TaskMessage

log = logging.getLogger("sparkjournal.task")
APPEND_CHUNK = 8 << 20           # Arrow bytes per chunk handed to the appender thread
INJECT_FAILURE = "sparkjournal.inject.fail"   # local property: "afterWrite:P" / "afterPrepare:P"


class SinkTaskError(SparkJournalError, RuntimeError):
    """A task could not write its part of a batch; names the batch, host and lane."""


@dataclasses.dataclass(frozen=True)
class WritePlan:
    """What every task of one write needs (pickled into the tasks)."""
    path: str                    # journal root path, placeholders allowed (node.py)
    options: tuple               # journal options as (key, value) pairs
    log_uri: str
    query: str | None            # None: the task reads sql.streaming.queryId
    batch: int | None            # None: the task reads streaming.sql.batchId
    log_id: str | None = None    # the commit log's LOG_ID as the driver sees it (None: unchecked)


def _task_identity(plan: WritePlan) -> TaskIdentity:
    from pyspark import TaskContext
    context = TaskContext.get()
    if context is None:                                 # called outside Spark (tools, tests)
        return TaskIdentity(plan.query or "direct", plan.batch or 0, -1, 0, -1)
    query = plan.query or context.getLocalProperty("sql.streaming.queryId")
    batch = plan.batch if plan.batch is not None else context.getLocalProperty("streaming.sql.batchId")
    if query is None or batch is None:
        raise SinkTaskError("the task has no streaming query id or batch id: the sparkjournal "
                            "stream writer runs only inside a streaming query")
    return TaskIdentity(query, int(batch), context.partitionId(), context.attemptNumber(),
                        context.taskAttemptId(), context.getLocalProperty(INJECT_FAILURE))


def _maybe_fail(identity: TaskIdentity, point: str) -> None:
    """Fault injection for tests: fail the first attempt of a partition."""
    inject, partition = identity.inject, identity.partition
    if inject and identity.attempt == 0 and inject == f"{point}:{partition}":
        raise SinkTaskError(f"injected failure {inject} (first attempt of partition {partition})")


def write_task(batches, plan: WritePlan) -> TaskMessage | None:
    """Writes one task's batches as one prepared transaction; returns its commit
    message, or None if the partition had no rows."""
    identity = _task_identity(plan)
    query, batch_id = identity.query, identity.batch
    _check_same_log(plan)
    state = shared_log(plan.log_uri)
    if state.done(query, batch_id):
        return None                         # a replay of a committed batch: nothing to write
    # After an operator's abort the batch is written again at the next epoch;
    # an abort landing after this read makes the driver's commit fail instead.
    identity = dataclasses.replace(identity, epoch=state.view().write_epoch(query, batch_id))
    where = f"batch {batch_id} of query {query} on host {socket.gethostname()}"
    with contextlib.ExitStack() as stack:
        try:
            writer = stack.enter_context(using(plan.path, plan.options))
        except Exception as error:
            raise SinkTaskError(f"{where}: cannot open a lane of {plan.path}: {error}") from error
        try:
            refuse_forgotten_root(state.view().forgotten, writer.node, writer.root)
        except ForgottenNodeError as error:
            raise SinkTaskError(f"{where}: {error}") from error
        return _write_prepared(writer, batches, plan, identity,
                               f"{where}, lane {writer.journal.directory}")


def _check_same_log(plan: WritePlan) -> None:
    """Refuses to write when the commit log this host reaches at the plan's URI
    is not the driver's (commit_log.py, LOG_ID): its decisions would never be
    seen here, and every batch would stay invisible."""
    if plan.log_id is None:
        return
    found = commit_log(plan.log_uri).log_id()
    if found != plan.log_id:
        raise SinkTaskError(
            f"the commit log {plan.log_uri} as host {socket.gethostname()} sees it is not the one "
            f"the driver writes (LOG_ID {found or 'absent'} here, {plan.log_id} on the driver): "
            f"that path is a different folder on each host, so no batch written here could "
            f"be seen committed. On a cluster, give commitLog a location the driver and every "
            f"host share (hdfs://, s3://, a shared mount), next to the checkpoint")


def _write_prepared(writer, batches, plan: WritePlan, identity: TaskIdentity,
                    where: str) -> TaskMessage | None:
    journal, tx, prepared = writer.journal, None, False
    try:
        resolve_lane(journal, writer.node, writer.lane)
        journal.refresh()
        carry_out_all(journal)
        if admit(journal, where) == DROP:
            dropped = sum(batch.num_rows for batch in batches)
            return _message(writer, identity, dropped=dropped) if dropped else None
        rows = nbytes = records = 0
        append_s = 0.0
        chunk, chunk_bytes = [], 0
        max_body = event_records.piece_bytes(journal.config)
        with contextlib.ExitStack() as appending:
            pipe = None
            for batch in _with_end(batches):
                if batch is not None:
                    for piece in event_records.pieces(batch, max_body):
                        chunk.append(event_records.tag(piece, identity.query, identity.batch))
                        chunk_bytes += piece.nbytes
                        rows += piece.num_rows
                if chunk and (batch is None or chunk_bytes >= APPEND_CHUNK):
                    if pipe is None:
                        tx = journal.next_tx_id()
                        pipe = appending.enter_context(
                            PipelinedAppend(journal, tx, event_records.EVENTS))
                    # Not synced here: the PREPARE's sync makes them durable with it.
                    pipe.put(chunk)
                    nbytes, chunk, chunk_bytes = nbytes + chunk_bytes, [], 0
            if pipe is None:
                return None
            records, append_s = pipe.finish(), pipe.append_s
        _maybe_fail(identity, "afterWrite")
        written = time.perf_counter()
        xid = BatchXid(plan.log_uri, identity.query, identity.batch, identity.partition,
                       identity.attempt, identity.task, identity.epoch, int(time.time() * 1000))
        journal.prepare(tx, xid.encode(), sync=True)
        prepared = True
        _maybe_fail(identity, "afterPrepare")
        done = time.perf_counter()
    except BaseException as error:
        _abandon(plan, journal, tx, prepared)
        if isinstance(error, (SinkTaskError, JournalFullError)) or not isinstance(error, Exception):
            raise
        raise SinkTaskError(f"{where}: {type(error).__name__}: {error}") from error
    return _message(writer, identity, tx=tx, records=records, rows=rows, nbytes=nbytes,
                    write_ms=append_s * 1e3, prepare_ms=(done - written) * 1e3)


def _message(writer, identity: TaskIdentity, *, tx: int | None = None, records: int = 0,
             rows: int = 0, nbytes: int = 0, write_ms: float = 0.0, prepare_ms: float = 0.0,
             dropped: int = 0) -> TaskMessage:
    """A task's commit message; ``tx`` None: it wrote nothing, the DROP policy
    dropped its ``dropped`` rows."""
    return TaskMessage(identity.query, identity.batch, writer.node, socket.gethostname(),
                       writer.root, writer.lane, tx, records, rows, nbytes, identity.partition,
                       identity.attempt, write_ms, prepare_ms, dropped, identity.epoch)


def _with_end(batches):
    """The batches, then None (the cue to append what is left)."""
    yield from batches
    yield None


def _abandon(plan: WritePlan, journal: Journal, tx: int | None, prepared: bool) -> None:
    """A failed task: roll back its unprepared tx (a prepared one is the commit
    log's to decide). If even that fails the writer is unusable: drop it, and
    the lane's next opener rolls the tx back."""
    if tx is None or prepared:
        return
    try:
        journal.rollback(tx, sync=False)
    except TransactionError:
        pass                                            # it never got a record
    except Exception:
        drop_writer(plan.path, plan.options)


def executor_task(batches, plan: WritePlan) -> TaskMessage | None:
    """``write_task`` in an executor's Python worker, with the worker's heap
    kept off its path (worker_heap.py). The driver's small batches call
    ``write_task`` itself: the driver's heap is left alone."""
    worker_heap.before_task()
    message = write_task(batches, plan)
    worker_heap.after_task()
    return message


def arrow_task(plan: WritePlan):
    """The function for ``mapInArrow``: one task's batches in, its commit
    message (zero or one row of MESSAGE_SCHEMA) out."""
    def run(batches):
        message = executor_task(batches, plan)
        if message is not None:
            yield pa.RecordBatch.from_pylist([message.to_json()], schema=MESSAGE_SCHEMA)
    return run
