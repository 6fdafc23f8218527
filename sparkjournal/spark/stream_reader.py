"""The streaming reader: ``spark.readStream.format("sparkjournal").load(path)``.

Offsets are per lane: ``{"lanes": {"<node id>|<lane>": next record id}}``. A
micro-batch reads, in every lane, the visible events whose record ids lie in
``[start, end)``. That is exactly once only if no record below ``end`` can
still change visibility, so a lane's end never passes its **stable point**:
the first record of a transaction that is not final yet (still being written,
or prepared and undecided in the commit log - Kafka's last stable offset).
Below it every transaction is committed or aborted for good, so the same range
read again (a restart replays the last batch with the same offsets) yields the
same rows, and no later commit can land below an offset already passed.

Record ids grow with the position in a lane (the appender hands them out in
append order), which the sink's writers rely on; a writer choosing its own ids
out of order would break this reader, not the journal.

A transaction left open by a writer that died never ends until the lane's next
writer rolls it back; the lane lock tells: if no process holds the lane, its
open transactions are dead and do not hold the stable point. A prepared
transaction of a query stopped mid-batch stays undecided and holds its lane
until the query restarts and Spark runs that batch again (or a later batch of
the query is decided, which aborts it); the reader logs which one.

Lanes are those the driver sees; a driver that does not see every lane holding
committed events fails the trigger (driver_view.py).

A user-specified schema (``readStream...schema("id bigint, key string")``) is
the columns every micro-batch yields, as in the batch reader (user_schema.py).
"""
from __future__ import annotations

import logging
import os

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader
from pyspark.sql.streaming.datasource import (ReadAllAvailable, ReadLimit, ReadMaxBytes,
                                              ReadMaxRows, SupportsTriggerAvailableNow)

from ..errors import LockSupportError, SparkJournalError
from ..journal.lock import LaneLock
from ..events import event_records
from ..events.lane_scan import LaneSlice, read_snapshot, scan
from ..events.page_records import live_pages
from ..events.page_scan import record_sizes
from .read_options import ReadOptions
from .reader import LanePartition
from ..events.resolve import Outcome, prepared_outcomes
from ..events.visible_events import lane_event_records
from ..events.undecided import warn_if_hanging
from ..events.xid import BatchXid
from ..config import load_config
from .driver_view import driver_lanes

log = logging.getLogger("sparkjournal.stream")


def lane_key(node: str | None, lane: str) -> str:
    return f"{node or '-'}|{os.path.basename(lane)}"


class JournalStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    def __init__(self, read: ReadOptions, log_uri: str, events_schema: pa.Schema,
                 columns: pa.Schema | None = None):
        self.options, self.log_uri = read, log_uri
        self.events_schema, self.columns = events_schema, columns     # user_schema.py
        self._cap: dict | None = None            # availableNow: the offsets at its start

    # --- driver side --------------------------------------------------------------
    def _lanes(self) -> dict[str, tuple[str, str | None]]:
        seen = driver_lanes(self.options.path, self.log_uri, self.options.allow_partial,
                            "spark.readStream.format('sparkjournal')")
        return {lane_key(node, lane): (lane, node) for lane, node in seen}

    def initialOffset(self) -> dict:
        return {"lanes": {}}

    def getDefaultReadLimit(self) -> ReadLimit:
        if self.options.max_rows is not None:
            return ReadMaxRows(self.options.max_rows)
        if self.options.max_bytes is not None:
            return ReadMaxBytes(self.options.max_bytes)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        self._cap = self._stable_offsets(self._lanes())

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:
        begin = dict(start.get("lanes", {}))
        lanes = self._lanes()                     # one listing of the node roots per trigger
        stable = self._cap if self._cap is not None else self._stable_offsets(lanes)
        ends = {key: max(begin.get(key, 0), at) for key, at in stable.items()}
        for key, at in begin.items():
            ends.setdefault(key, at)
        if isinstance(limit, (ReadMaxRows, ReadMaxBytes)):
            ends = self._limited(begin, ends, limit, lanes)
        return {"lanes": ends}

    def _stable_offsets(self, lanes: dict) -> dict[str, int]:
        return {key: stable_point(lane, node, self.options.journal, self.options.skip_corrupt)
                for key, (lane, node) in lanes.items()}

    def _limited(self, begin: dict, ends: dict, limit: ReadLimit, lanes: dict) -> dict:
        """Ends that take whole records, lane by lane in turn, until the limit
        is reached (at least one record, so a tiny limit still progresses)."""
        budget = limit.max_rows if isinstance(limit, ReadMaxRows) else limit.max_bytes
        by_rows = isinstance(limit, ReadMaxRows)
        queues = {key: pending_sizes(*lanes[key], self.options.journal, begin.get(key, 0), end,
                                     self.options.skip_corrupt)
                  for key, end in ends.items() if end > begin.get(key, 0) and key in lanes}
        limited = {key: begin.get(key, 0) for key in ends}
        for key in ends:
            if key not in queues:
                limited[key] = ends[key]          # nothing visible to take: skip to the end
        taken = 0
        while queues and (taken < budget or taken == 0):
            for key in list(queues):
                queue = queues[key]
                if not queue:
                    limited[key] = ends[key]      # the lane's remaining records are all taken
                    del queues[key]
                    continue
                record_id, rows, nbytes = queue.pop(0)
                limited[key] = record_id + 1
                taken += rows if by_rows else nbytes
                if not queue:
                    limited[key] = ends[key]
                    del queues[key]
                if taken >= budget:
                    break
        return limited

    def partitions(self, start: dict, end: dict):
        begin = start.get("lanes", {})
        lanes = self._lanes()
        found = []
        for key, stop in sorted(end.get("lanes", {}).items()):
            first = begin.get(key, 0)
            if stop <= first:
                continue
            if key not in lanes:
                raise SparkJournalError(
                    f"lane {key} named by this stream's offsets is not visible under "
                    f"{self.options.path} any more: its records {first}..{stop - 1} cannot be "
                    f"read. Restore the lane, or start the stream from a new checkpoint")
            lane, node = lanes[key]
            found.append(LanePartition(LaneSlice(
                lane, node, self.log_uri, first_id=first, end_id=stop,
                predicate=self.options.start_predicate(), skip_corrupt=self.options.skip_corrupt)))
        return found

    def commit(self, end: dict) -> None:
        """Nothing to release: the journal keeps records until maintenance."""

    # --- executor side --------------------------------------------------------------
    def read(self, partition: LanePartition):
        yield from scan(partition.slice, self.events_schema, self.options.journal,
                        columns=self.columns)


def stable_point(lane: str, node: str | None, journal_options: dict,
                 skip_corrupt: bool = False) -> int:
    """The lane's stable point: every record below it is final (module doc).
    Every record's CRC is checked: an offset is logged before its batch runs,
    so one built from a damaged header could pass records for good. With
    ``skip_corrupt``, over the lane as its scan sees it (damaged files left
    out)."""
    with read_snapshot(lane, journal_options, skip_corrupt) as snapshot:
        holds = []
        open_txs = snapshot.open_transactions()
        if open_txs and _writer_alive(lane):
            holds += [min(ids) for ids in open_txs.values() if ids]
        if node is not None:
            undecided = [tx for tx, fate in prepared_outcomes(
                snapshot, node, os.path.basename(lane)).items() if fate is Outcome.UNDECIDED]
            warn_after_s = load_config(journal_options).undecidedWarnAfter / 1e9 if undecided else 0
            for prepared in snapshot.prepared():
                if prepared.tx_id in undecided and prepared.record_ids:
                    holds.append(min(prepared.record_ids))
                    log.info("lane %s: undecided transaction %d (its batch has no decision "
                             "yet) holds the stream at record %d", lane, prepared.tx_id,
                             holds[-1])
                    warn_if_hanging(lane, BatchXid.decode(prepared.xid), prepared.tx_id,
                                    warn_after_s, os.path.dirname(lane))
        return min([snapshot.max_record_id + 1] + holds)


def _writer_alive(lane: str) -> bool:
    """Whether a process may hold the lane's writer lock: true too where the
    lock cannot be taken at all (no OFD locks), since a JVM writer may."""
    lock = LaneLock(lane)
    try:
        if lock.try_acquire():
            lock.release()
            return False
    except LockSupportError:
        pass
    return True


def pending_sizes(lane: str, node: str | None, journal_options: dict, first: int,
                  end: int, skip_corrupt: bool = False) -> list[tuple[int, int, int]]:
    """(record id, rows, body bytes) of the lane's visible events in [first,
    end), in id order; paged records' from their page (bytes estimated)."""
    with read_snapshot(lane, journal_options, skip_corrupt) as snapshot:
        sizes = [size for ref in live_pages(snapshot) if ref.last_id >= first and ref.first_id < end
                 for size in record_sizes(lane, ref, first, end)]
        for record in lane_event_records(snapshot, node, os.path.basename(lane)):
            if first <= record.record_id < end:
                rows = event_records.read_body(record.body)[0].num_rows
                sizes.append((record.record_id, rows, record.body_len))
        return sorted(sizes)
