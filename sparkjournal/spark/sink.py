"""The exactly-once foreachBatch sink.

    from sparkjournal import JournalSink
    query = (events.writeStream
             .foreachBatch(JournalSink("/var/lib/sparkjournal/events"))
             .option("checkpointLocation", checkpoint)
             .start())

Per micro-batch: executor tasks write their partitions into lanes of their
node's root and PREPARE (lane_writer.py); once the Spark job succeeded - every
task did - the driver records the decision naming exactly the transactions of
the attempts whose messages it received, then COMMITs the lanes it can reach
(committer.py). A batch id whose decision exists is skipped, so Spark's replay
of a batch after a driver crash never lands it twice, and losing task attempts
(retries, speculation) are never visible.

The sink identifies itself by the streaming query id, stable across restarts
from the same checkpoint, or by ``txnAppId`` (as Delta's option) when several
checkpoints must count as one writer.

Small batches (``smallBatchRows``): a Python job on the executors has a fixed
cost (~70-150 ms here for two rows) larger than Spark's parquet sink's whole
batch, so a micro-batch of at most that many rows may instead be collected to
the driver as Arrow (small_batch.py: the executors stay in the JVM) and written by
the driver into a lane of the driver's node root, as one prepared transaction
like a task's, under the same decision. Only right where the driver's node root
is one readers see: always in local mode (master ``local`` or ``local[...]``),
so there it is 10000 unless set (``small_batch_rows``); elsewhere 0 (off)
unless set (a driver on a journal node). Whether a batch is small is learnt by
collecting at most ``smallBatchRows + 1`` rows; after a larger batch the sink
goes straight to the executors until a batch is small again. The first batch
logs the value in effect and why; each batch's line says "from the driver" or
"from N tasks".

Writer (``writer``): "jvm" runs phase one in JVM tasks with no Python worker
(jvm_sink.py, io.sparkjournal.spark.JvmSinkWrite), which skips the Arrow
transfer into Python; "python" runs each task in a Python worker
(``mapInArrow`` over lane_writer.write_task). The JVM writer needs the
connector on the session's classpath and refuses, before any task runs,
journal options it does not enforce and columns it cannot convert. "auto"
(the default) takes the JVM where neither stops it, else Python, settled at
the query's first batch. Small batches are written by the driver either way.
The start line says "writer=jvm" or "writer=python" and why; a batch's line
says "from N JVM tasks" or "from N tasks".

From a Spark Connect client (connect.py) the sink is pickled and runs in the
Python process the server starts on its driver's host, which has no py4j:
a batch that is not small is written by the server's own
``format("sparkjournal")`` write with Delta's idempotent-write options
``txnAppId`` = the query and ``txnVersion`` = the batch id (the JVM
connector's write where the server has it, else the Python data source's;
``writer`` is passed on), whose driver half records the same decision in the
same commit log. Connect does not give foreachBatch the query id, so
``txnAppId`` is required there: the first batch fails before any row is
written without it. The committer is made in the process that runs the
batches, never pickled.
"""
from __future__ import annotations

import collections
import logging
import time

from ..config import LOCAL_SMALL_BATCH_ROWS, SINK, SPARK_OWN, load_config
from ..errors import SparkJournalError
from .committer import BatchCommitter, BatchMetrics
from .connect import is_connect
from .connector import attach
from .jvm_sink import jvm_write, writer_choice
from .lane_writer import WritePlan, arrow_task, write_task
from .task_message import TaskMessage, message_ddl
from .schema import session_timezone, spark_to_arrow
from .small_batch import collect_small

log = logging.getLogger("sparkjournal.sink")
HISTORY = 1000                    # batches whose metrics JournalSink.history keeps


def split_options(options: dict) -> tuple[dict, dict]:
    """(sink options, typed, under their own spelling; journal options, raw):
    both are validated here, on the driver, so a typo fails before any task
    runs."""
    sink, journal = {}, {}
    for key, value in options.items():
        option = SINK.find(key)
        if option is not None:
            sink[option.name] = option.parse(value)
        elif key.lower() not in SPARK_OWN:
            journal[key] = value
    load_config(journal)
    return sink, journal


def local_mode(master: str) -> bool:
    """Driver and executors are one JVM: master ``local`` or ``local[...]``
    (``local[4]``, ``local[*]``, ``local[2,4]``). Not ``local-cluster[...]``,
    whose executors are JVMs of their own, nor any cluster manager."""
    return master == "local" or master.startswith("local[")


def small_batch_rows(option: int | None, master: str) -> tuple[int, str]:
    """(smallBatchRows in effect, the start line saying why): the option when
    set (0 included), else 10000 in local mode, where the driver's root is the
    one root every reader sees, and 0 elsewhere."""
    if option is not None:
        rows, why = option, "as set"
    elif local_mode(master):
        rows, why = LOCAL_SMALL_BATCH_ROWS, "local mode"
    else:
        return 0, (f"smallBatchRows=0 (master {master} is not local mode: every batch is "
                   f"written by executor tasks; set smallBatchRows only where readers see the "
                   f"driver's root)")
    if rows == 0:
        return 0, f"smallBatchRows=0 ({why}: every batch is written by executor tasks)"
    return rows, (f"smallBatchRows={rows} ({why}: batches of at most {rows} rows are written "
                  f"by the driver; set smallBatchRows=0 to always use tasks)")


class JournalSink:
    """A foreachBatch function writing each micro-batch exactly once."""

    def __init__(self, path: str, **options):
        sink_options, journal_options = split_options(options)
        self.path = path
        self.txn_app_id = sink_options.get("txnAppId")
        self.journal_options = tuple(sorted((k, str(v)) for k, v in journal_options.items()))
        self.commit_log_option = sink_options.get("commitLog")
        self._committer: BatchCommitter | None = None      # made where batches run: committer
        self.small_batch_option = sink_options.get("smallBatchRows")   # None: not set
        self.writer_option = sink_options.get("writer", "AUTO")
        self.jvm = False                              # tasks write in the JVM: from the first batch
        self.connect = False                          # a Connect client's: from the first batch
        self.small_batch_rows: int | None = None      # in effect, from the first batch on
        self._small_batch_line = ""                   # ... and why, as logged
        self._announced = None                        # the query whose start was logged
        self.history: collections.deque[BatchMetrics] = collections.deque(maxlen=HISTORY)
        self._landed = 0
        self._last_rows = 0                  # rows of the last batch written: small or not

    @property
    def committer(self) -> BatchCommitter:
        """The driver's half of the commit, made at first use in the process
        that runs the batches (a Connect client pickles the sink before the
        server runs it)."""
        if self._committer is None:
            self._committer = BatchCommitter(self.path, dict(self.journal_options),
                                             self.commit_log_option)
        return self._committer

    def __getstate__(self) -> dict:
        """What a Connect client pickles: the sink without its committer (its
        locks and cached views), which the process running the batches makes."""
        return {**self.__dict__, "_committer": None}

    def query_id(self, df) -> str:
        if self.txn_app_id:
            return self.txn_app_id
        if is_connect(df.sparkSession):
            raise SparkJournalError(
                f"JournalSink({self.path!r}) runs for a Spark Connect client, whose foreachBatch "
                f"is not told the streaming query's id that the sink's exactly-once decision is "
                f"keyed by: pass txnAppId='<a stable name for this query>' to JournalSink "
                f"(nothing of this batch was written)")
        query = df.sparkSession.sparkContext.getLocalProperty("sql.streaming.queryId")
        if not query:
            raise SparkJournalError("JournalSink cannot see the streaming query id: pass "
                                    "txnAppId='<a stable name>' to JournalSink")
        return query

    def __call__(self, df, batch_id: int) -> None:
        query = self.query_id(df)
        if query != self._announced:
            self._start(df, query)
        metrics = BatchMetrics(query, batch_id)
        if self.committer.is_committed(query, batch_id):
            metrics.skipped = True
        else:
            where = f"batch {batch_id} of query {query} into {self.path}"
            timezone = session_timezone(df)
            arrow_schema = spark_to_arrow(df.schema, timezone)
            self.committer.check_schema(arrow_schema, where)
            plan = WritePlan(self.path, self.journal_options, self.committer.log_uri, query,
                             batch_id, self.committer.log.log_id(create=True))
            started = time.perf_counter()
            small = self._small_batch(df, arrow_schema, metrics)
            if small is not None:
                message = write_task(iter(small.to_batches()), plan)      # here, on the driver
                messages = [message] if message is not None else []
                metrics.on_driver = True
            elif self.connect:
                self._connect_write(df, query, batch_id, metrics)
                messages = None
            elif self.jvm:
                messages = jvm_write(df, plan, self.committer.config, timezone)
                metrics.jvm = True
            else:
                rows = df.mapInArrow(arrow_task(plan), message_ddl()).collect()
                messages = [TaskMessage.from_json(row.asDict()) for row in rows]
            metrics.job_ms = (time.perf_counter() - started) * 1e3
            if messages is not None:
                self.committer.commit(query, batch_id, messages, metrics)
            self._last_rows = metrics.rows + metrics.dropped_rows
        self.history.append(metrics)
        self._landed += 1
        metrics.log_to(log)

    def _start(self, df, query: str) -> None:
        """Settles smallBatchRows from the master, once, and the writer, and
        logs both and why at the query's first batch."""
        self.connect = is_connect(df.sparkSession)
        if not self.connect:
            attach(df.sparkSession)      # the first sparkjournal call on the session
        if self.small_batch_rows is None:
            master = df.sparkSession.conf.get("spark.master")
            self.small_batch_rows, self._small_batch_line = small_batch_rows(
                self.small_batch_option, master)
        if self.connect:
            writer = (f"writer={self.writer_option.lower()} (Spark Connect: batches that are not "
                      f"small are written by the server's format('sparkjournal') write, the JVM "
                      f"connector's where the server has it)")
        else:
            self.jvm, writer = writer_choice(df, self.writer_option, self.committer.config)
        log.info("query %s into %s: %s; %s", query, self.path, writer, self._small_batch_line)
        self._announced = query

    def _connect_write(self, df, query: str, batch: int, metrics: BatchMetrics) -> None:
        """The batch written by the Connect server's ``format("sparkjournal")``
        write, idempotent per (txnAppId, txnVersion) = (query, batch): its driver
        half records the decision. ``metrics`` are read back from that decision;
        the commit log is checkpointed here as after the sink's own decisions.
        Crash behaviour: that write's (a replay finds the batch done and skips)."""
        writer = (df.write.format("sparkjournal").mode("append")
                  .option("txnAppId", query).option("txnVersion", str(batch)))
        for key, value in self.journal_options:
            writer = writer.option(key, value)
        if self.commit_log_option:
            writer = writer.option("commitLog", self.commit_log_option)
        if self.writer_option != "AUTO":
            writer = writer.option("writer", self.writer_option.lower())
        writer.save(self.path)
        shared = self.committer.shared
        decision = shared.view(refresh=True).decision(query, batch)
        if decision is None:
            log.warning("batch %d of query %s: the server's write returned, but its decision is "
                        "not in the commit log %s as this process reads it (a checkpoint folded "
                        "it, or the server writes another log: check commitLog); the batch's "
                        "line has no counts", batch, query, self.committer.log_uri)
        else:
            metrics.count_written(decision.txs)
            metrics.tasks = len(decision.txs)
        metrics.through_format = True
        self.committer.checkpointer.after_decision(sum(map(len, shared.view().entries.values())))

    def _small_batch(self, df, arrow_schema, metrics: BatchMetrics):
        """The whole micro-batch as an Arrow table if it has at most
        smallBatchRows rows (and the last batch was small too), else None
        with the reason in ``metrics``."""
        limit = self.small_batch_rows
        if not limit:
            return None
        if self._last_rows > limit:
            metrics.tasks_because = f"the last batch was over smallBatchRows={limit}"
            return None
        table, _how = collect_small(df, limit)
        if table is None:
            self._last_rows = limit + 1
            metrics.tasks_because = f"over smallBatchRows={limit}"
            return None
        # the executors' Arrow types exactly (toArrow names the session time zone its own way)
        return table.cast(arrow_schema)

    @property
    def batches_landed(self) -> int:
        """Batches this sink committed or found committed, in this run."""
        return self._landed
