"""An exactly-once foreachBatch sink that writes each micro-batch from the driver.

    query = events.writeStream.foreachBatch(DriverJournalSink(path)).start()

Each micro-batch becomes ONE journal transaction in a lane of the journal root:
its Arrow record batches (user type EVENTS, Arrow IPC bodies) and a marker
record (user type BATCH_MARKER: query id and batch id), then COMMIT. Spark
replays a batch id after a crash (offsets/N without commits/N); the sink finds
that batch's marker in the journal and skips it, so a batch is landed exactly
once: before the COMMIT is durable nothing of it is visible, after it the marker
is there too.

This path collects each micro-batch on the driver. The executor-side
two-phase-commit sink (each task writes its node's lanes) is issue 3's.
"""
from __future__ import annotations

import json
import logging
import time

import pyarrow as pa

from ..journal.root import JournalRoot

EVENTS = 1
BATCH_MARKER = 2
log = logging.getLogger("sparkjournal.sink")


def committed_batches(root: JournalRoot) -> dict[str, set[int]]:
    """{query id: batch ids} found in the markers of every lane."""
    seen: dict[str, set[int]] = {}
    for snapshot in root.read_lanes().values():
        with snapshot:
            for record in snapshot.records():
                if record.user_type == BATCH_MARKER:
                    marker = json.loads(bytes(record.body))
                    seen.setdefault(marker["query"], set()).add(marker["batch"])
    return seen


class DriverJournalSink:
    def __init__(self, path: str, query_name: str | None = None, **options):
        self.root = JournalRoot(path, **options)
        self.query_name = query_name
        self._journal = None
        self._done: set[int] | None = None

    def _query_id(self, df) -> str:
        if self.query_name:
            return self.query_name
        spark = df.sparkSession
        return spark.sparkContext.getLocalProperty("sql.streaming.queryId") or "batch"

    def __call__(self, df, batch_id: int) -> None:
        query = self._query_id(df)
        if self._journal is None:
            self._done = committed_batches(self.root).get(query, set())
            self._journal = self.root.open_writer()
        if batch_id in self._done:
            log.info("batch %d of query %s is already in the journal: skipped", batch_id, query)
            return
        started = time.perf_counter()
        table: pa.Table = df.toArrow()
        journal = self._journal
        tx = journal.next_tx_id()
        batches = [b for b in table.to_batches() if b.num_rows]
        if batches:
            journal.append_batch(batches, user_type=EVENTS, tx_id=tx)
        marker = json.dumps({"query": query, "batch": batch_id, "rows": table.num_rows}).encode()
        journal.append_add_tx(tx, journal.next_record_id(), marker, user_type=BATCH_MARKER)
        journal.commit(tx)
        self._done.add(batch_id)
        log.info("batch %d: %d rows, %d bytes committed in %.1f ms", batch_id, table.num_rows,
                 table.nbytes, (time.perf_counter() - started) * 1e3)

    @property
    def batches_landed(self) -> int:
        """Batch ids of this query found in or written to the journal so far."""
        return len(self._done or ())

    def close(self) -> None:
        if self._journal is not None:
            self._journal.close()
            self._journal = None


def read_events(path: str) -> pa.Table | None:
    """Every committed event of every lane as one Arrow table (None if empty)."""
    tables = []
    for snapshot in JournalRoot(path).read_lanes().values():
        with snapshot:
            for record in snapshot.records():
                if record.user_type == EVENTS:
                    tables.append(pa.ipc.open_stream(pa.py_buffer(bytes(record.body))).read_all())
    return pa.concat_tables(tables) if tables else None
