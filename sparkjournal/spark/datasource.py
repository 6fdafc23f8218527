"""The ``sparkjournal`` data source: the same two-phase commit as JournalSink,
through PySpark's Python DataSource writers.

    events.writeStream.format("sparkjournal").option("checkpointLocation", c).start(path)
    df.write.format("sparkjournal").mode("append").save(path)
    spark.read.format("sparkjournal").load(path)          (reader.py)
    spark.read.format("sparkjournal").schema("key string").load(path)   (user_schema.py)
    spark.readStream.format("sparkjournal").load(path)    (stream_reader.py)

``write()`` runs in executor tasks (lane_writer.executor_task: PREPARE before it
returns); ``commit()`` runs on the driver with the messages of the winning
attempts and records the decision (committer.py). A stream batch id already
decided is not written twice: its tasks find the decision and write nothing,
and any transaction a replay still wrote is aborted by the existing decision.
A batch write is one decision of its own (query ``batch-write-<id>``); an
aborted one records an empty decision, so its prepared data is rolled back.
With Delta's idempotent-write options ``txnAppId`` and ``txnVersion`` (both
or neither) it is batch ``txnVersion`` of query ``txnAppId`` instead: a
write whose batch is done already writes nothing (how the foreachBatch sink
writes from a Spark Connect client, sink.py), and an aborted one records
nothing (presumed abort: a retry of the same version writes it).

These are the Python writers: with the JVM connector on the classpath the
name is the connector's, whose own writes serve ``format("sparkjournal")``
unless ``writer`` is ``python`` (jvm/.../JournalTable.java).
"""
from __future__ import annotations

import dataclasses
import logging
import uuid

import pyarrow as pa
from pyspark.sql.datasource import (DataSource, DataSourceArrowWriter,
                                    DataSourceStreamArrowWriter, WriterCommitMessage)

from ..errors import SparkJournalError
from .committer import BatchCommitter, BatchMetrics, default_log_uri
from .lane_writer import WritePlan, executor_task
from .task_message import TaskMessage
from .read_options import ReadOptions, parse_read_options
from .reader import METADATA, reader_class
from ..events.lane_scan import spark_facing
from ..events.resolve import commit_log
from .stream_reader import JournalStreamReader
from .schema import spark_to_arrow
from .user_schema import read_columns
from .sink import split_options

log = logging.getLogger("sparkjournal.datasource")


@dataclasses.dataclass
class JournalCommitMessage(WriterCommitMessage):
    message: dict | None            # a TaskMessage's to_json (plain values); None: no rows


def _setup(options) -> tuple[str, BatchCommitter, tuple, dict]:
    options = dict(options)
    path = options.get("path")
    if not path:
        raise SparkJournalError("the sparkjournal data source needs a path: .save(path), "
                                ".start(path) or .option('path', ...)")
    sink_options, journal_options = split_options(options)
    if sink_options.get("writer") == "JVM":
        raise SparkJournalError("writer=jvm needs sparkjournal's JVM connector in the session "
                                "(for a Spark Connect client: in the server, spark-submit --jars "
                                "\"$(sparkjournal jar)\"); without it the format('sparkjournal') "
                                "writers write through Python tasks: leave writer unset or set "
                                "it to python")
    if "txnVersion" in sink_options and "txnAppId" not in sink_options:
        raise SparkJournalError("txnVersion needs txnAppId: together they make a write "
                                "idempotent (batch txnVersion of writer txnAppId)")
    committer = BatchCommitter(path, journal_options, sink_options.get("commitLog"))
    return path, committer, tuple(sorted(journal_options.items())), sink_options


class _Writer:
    def __init__(self, options, schema, query: str | None, batch: int | None):
        self.path, committer, self.journal_options, sink_options = _setup(options)
        app_id = sink_options.get("txnAppId")
        if batch is not None and app_id is not None and "txnVersion" not in sink_options:
            raise SparkJournalError(f"txnAppId and txnVersion go together in a batch write: give "
                                    f"both (the write is then version txnVersion of writer "
                                    f"txnAppId, skipped if already committed) or neither "
                                    f"(txnAppId={app_id}, txnVersion=None)")
        if "txnVersion" in sink_options:
            if batch is None:
                raise SparkJournalError("txnVersion is an option of batch writes (df.write): a "
                                        "stream's batches are numbered by Spark")
            query, batch = app_id, sink_options["txnVersion"]     # an idempotent batch write
        self.idempotent = "txnVersion" in sink_options
        self.log_uri = committer.log_uri
        self.plan = WritePlan(self.path, self.journal_options, self.log_uri, app_id or query, batch,
                              committer.log.log_id(create=True))
        committer.check_schema(spark_to_arrow(schema), f"a write into {self.path}")

    def write(self, iterator):
        message = executor_task(iterator, self.plan)
        return JournalCommitMessage(message.to_json() if message is not None else None)

    def _committer(self) -> BatchCommitter:
        return BatchCommitter(self.path, dict(self.journal_options), self.log_uri)

    def _finish(self, messages, batch: int) -> None:
        found = _written(messages)
        query = self.plan.query or next((m.query for m in found), None)
        if query is None:
            return                                    # no task wrote a row: nothing to commit
        committer = self._committer()
        metrics = BatchMetrics(query, batch)
        if committer.is_committed(query, batch):
            metrics.skipped = True                    # a replay: its new txs stay aborted
            committer.commit_reachable(found)
        else:
            committer.commit(query, batch, found, metrics)
        metrics.log_to(log)


def _written(messages) -> list[TaskMessage]:
    """The commit messages of the tasks that wrote rows."""
    return [TaskMessage.from_json(m.message) for m in messages
            if isinstance(m, JournalCommitMessage) and m.message is not None]


class JournalBatchWriter(_Writer, DataSourceArrowWriter):
    def __init__(self, options, schema):
        super().__init__(options, schema, f"batch-write-{uuid.uuid4().hex[:16]}", 0)

    def commit(self, messages) -> None:
        self._finish(messages, self.plan.batch)

    def abort(self, messages) -> None:
        if self.idempotent:
            log.warning("batch %d of writer %s into %s aborted: nothing of it is visible; a "
                        "retry of the same txnVersion writes it", self.plan.batch,
                        self.plan.query, self.path)
            return
        committer = self._committer()
        if not committer.is_committed(self.plan.query, 0):
            committer.log.record(self.plan.query, 0, [])
        committer.commit_reachable(_written(messages))


class JournalStreamWriter(_Writer, DataSourceStreamArrowWriter):
    def __init__(self, options, schema):
        super().__init__(options, schema, None, None)

    def commit(self, messages, batchId: int) -> None:
        self._finish(messages, batchId)

    def abort(self, messages, batchId: int) -> None:
        # Presumed abort: without a decision the batch's prepared data stays
        # invisible, and Spark retries the batch under the same id.
        log.warning("batch %d of the stream into %s aborted; it is retried under the same id",
                    batchId, self.path)


class JournalDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "sparkjournal"

    def _read_setup(self) -> tuple[ReadOptions, str, pa.Schema]:
        read = parse_read_options(self.options)
        log_uri = read.commit_log or default_log_uri(read.path)
        stored = commit_log(log_uri).read_schema()
        if stored is None:
            raise SparkJournalError(f"the journal at {read.path} has no events schema yet (no "
                                    f"schema.arrow in its commit log {log_uri}): write to it "
                                    f"first, or pass commitLog if it lives elsewhere")
        return read, log_uri, spark_facing(stored)

    def schema(self):
        from pyspark.sql.pandas.types import from_arrow_schema
        _read, _log, stored = self._read_setup()
        return from_arrow_schema(pa.schema(list(stored) + list(METADATA)))

    def reader(self, schema):
        read, log_uri, stored = self._read_setup()
        return reader_class()(read.path, log_uri, stored, read.journal,
                              read.start_predicate(), read.skip_corrupt,
                              read_columns(stored, schema), read.allow_partial)

    def streamReader(self, schema):
        read, log_uri, stored = self._read_setup()
        return JournalStreamReader(read, log_uri, stored, read_columns(stored, schema))

    def writer(self, schema, overwrite: bool):
        if overwrite:
            raise SparkJournalError("sparkjournal is append-only: use mode('append')")
        return JournalBatchWriter(self.options, schema)

    def streamWriter(self, schema, overwrite: bool):
        return JournalStreamWriter(self.options, schema)
