"""Reading one lane as Arrow batches: the one read path of the batch reader,
the streaming reader and the locality-aware read.

A ``LaneSlice`` names what to read: a lane folder, its root's node id, the
commit log, a record id range (the streaming reader's offsets; the whole lane
for a batch read) and a pruning predicate. ``scan`` yields each visible event
record of the slice (visible_events.lane_event_records: committed, or prepared
and committed by the commit log) without its deleted rows (deletion vectors and
pending delete requests, lane_deletes.py) as a batch of exactly the journal's
events schema (nulls for columns a record predates) plus the metadata columns,
or of the columns the caller asked for (read_columns.py); ``_row`` is each
event's original position in its record, so (node, lane, record id, row) names
one event for good. Paged events (page_records.py) are
read from their page files, oldest first, then the journal's live tail.

Damage: by default a corrupt record before a lane's tail fails the scan with
CorruptJournalError naming the file and offset (a torn tail is just the end).
Big event records of sealed files are CRC-checked when read, while their
bytes are still in cache, and every other record before the scan ends
(Journal.read's defer_crc, deferred_crc.py): damage found then fails the scan
after batches were yielded, which fails the Spark task, as any damage does.
With ``skip_corrupt`` the damaged file is left out (read-only: nothing is
moved) and a warning names it, the offset and every record and transaction
lost with it; ``scan`` also returns that report through ``skipped``.
"""
from __future__ import annotations

import dataclasses
import datetime
import logging
import os
import socket

import pyarrow as pa

from ..errors import SparkJournalError
from ..format.constants import METADATA_COLUMNS
from ..journal.journal import Journal
from . import event_records
from .lane_deletes import lane_deletions, pending_deletions
from .node import executor_id, read_node_id
from .page_records import live_pages
from .page_scan import read_page, wanted
from .pruning import Predicate, read_stats
from .read_columns import METADATA, RECORD_METADATA, ReadColumns, full_schema  # noqa: F401 (METADATA: re-exported)
from .resolve import shared_log
from .visible_events import lane_event_records

log = logging.getLogger("sparkjournal.read")



@dataclasses.dataclass(frozen=True)
class LaneSlice:
    lane: str                         # the lane folder
    node: str | None                  # its root's node id (uuid@host)
    log_uri: str
    first_id: int = 0                 # record ids first_id <= id < end_id
    end_id: int | None = None         # None: to the end of the lane
    predicate: Predicate = Predicate()
    skip_corrupt: bool = False
    pages_elsewhere: tuple = ()       # page files another scan reads (locality.py): skipped

    @property
    def host(self) -> str | None:
        return (self.node or "").rpartition("@")[2] or None


def scan(part: LaneSlice, events_schema: pa.Schema, journal_options: dict,
         skipped: list | None = None, columns: pa.Schema | None = None):
    """Yields the slice's visible events, paged ones (page_scan.py) first, as
    batches of ``columns`` (default: events schema + METADATA; any other
    raises UnknownColumnError before the lane is opened); appends what a
    skip_corrupt scan left out to ``skipped`` (also logged)."""
    output = ReadColumns(events_schema, columns)
    lane = os.path.basename(part.lane)
    log_ = shared_log(part.log_uri)
    end = part.end_id if part.end_id is not None else 1 << 63
    check_node(part)
    deleted_by_requests = pending_deletions(part.lane)        # before the snapshot: lane_deletes.py
    snapshot = read_snapshot(part.lane, journal_options, part.skip_corrupt, defer_crc=True)
    try:
        _report(part.lane, snapshot.report, skipped)
        deletions = lane_deletions(snapshot, deleted_by_requests)
        schema = full_schema(events_schema)
        constants = {METADATA_COLUMNS.HOST: part.host, METADATA_COLUMNS.LANE: lane}
        for ref in live_pages(snapshot):
            if ref.name not in part.pages_elsewhere and wanted(ref, part.first_id, end,
                                                                 part.predicate, constants):
                for batch in read_page(part.lane, ref, schema, deletions, first_id=part.first_id,
                                       end_id=end, constants=constants):
                    yield batch if columns is None else pa.RecordBatch.from_arrays(
                        batch.select(output.schema.names).columns, schema=output.schema)
        for record in lane_event_records(snapshot, part.node, lane):
            if part.first_id <= record.record_id < end:
                batch = event_batch(record, log_, deletions, events_schema, part.host, lane,
                                    part.predicate, output, skip_corrupt=part.skip_corrupt)
                if batch is not None:
                    yield batch
        # Records not read above were loaded unchecked: the read is complete
        # only once they are checked (deferred_crc.py).
        snapshot.check_deferred()
    finally:
        snapshot.close()


def read_snapshot(lane: str, journal_options: dict, skip_corrupt: bool,
                  defer_crc: bool = False):
    """A read-only snapshot of ``lane`` as every reader of it must see it, the
    driver planning a stream's offsets as much as the scan: with
    ``skip_corrupt`` a damaged file is left out (recovery mode, read-only:
    nothing is moved), else damage raises CorruptJournalError.
    ``defer_crc``: Journal.read's, for a reader that reads the bodies."""
    options = dict(journal_options, recover=True) if skip_corrupt else journal_options
    return Journal.read(lane, defer_crc=defer_crc, **options)


def event_batch(record, log_, deletions, events_schema: pa.Schema, host: str | None, lane: str,
                predicate: Predicate = Predicate(),
                output: ReadColumns | None = None,
                skip_corrupt: bool = False) -> pa.RecordBatch | None:
    """One stored record's visible events as a batch of ``output``'s columns
    (default: ``events_schema`` plus the metadata columns); None when none is
    left or ``predicate`` rules the record out. Raises pyarrow.ArrowInvalid
    (*damaged*, EVENTS.md) for a body that is not the stream EVENTS.md states
    (a compressed one included) or whose tag does not decode, whether or not
    the metadata columns were asked for."""
    output = output or ReadColumns(events_schema)
    stored, message = event_records.split_body(record.body)
    query, batch_id = event_records.batch_of(stored)
    metadata = {}
    if predicate or output.metadata:
        at_ms = (log_.committed_at_ms(query, batch_id, skip_corrupt)
                 if query is not None else None)
        committed = (datetime.datetime.fromtimestamp(at_ms / 1e3, datetime.timezone.utc)
                     if at_ms is not None else None)
        metadata = dict(zip(RECORD_METADATA, (batch_id, committed, host, lane, record.record_id)))
    if predicate and not predicate.may_match(metadata, read_stats(stored.metadata),
                                             events_schema):
        return None
    batch = deletions.apply(pa.ipc.read_record_batch(message, output.read_schema(stored)),
                            record.record_id)
    return output.batch(batch, metadata) if batch is not None else None


class WrongNodeError(SparkJournalError):
    """A lane's task ran on a node that does not hold the lane."""


def check_node(part: LaneSlice) -> None:
    """Raises WrongNodeError unless the lane's root, as this machine sees it,
    carries the lane's node id: another node's root at the same path, or none,
    is never read (the task fails, Spark retries it elsewhere)."""
    if part.node is None:
        return                                  # a root without NODE_ID: nothing to check
    root = os.path.dirname(part.lane)
    found = read_node_id(root)
    if found != part.node:
        raise WrongNodeError(
            f"lane {part.lane} is held by node {part.node} (host {part.host}), but this task "
            f"runs on host {socket.gethostname()} (executor {executor_id()}), where {root} has "
            f"NODE_ID {found or 'none'}. sparkjournal.read(spark, path) runs each lane's task "
            f"on its node (set spark.locality.wait, e.g. 30s, so the scheduler waits for it); "
            f"spark.read.format('sparkjournal') needs every executor to see every lane (one "
            f"machine, local-cluster, a shared mount)")


def _report(lane: str, report, skipped: list | None) -> None:
    for recovery in report.recoveries:
        entry = {"lane": lane, "file": recovery.file, "offset": recovery.offset,
                 "detail": recovery.detail, "lost_record_ids": recovery.lost_record_ids,
                 "lost_tx_ids": recovery.lost_tx_ids}
        log.warning("skipCorrupt: skipped %s of lane %s, damaged at offset %d (%s): %d records "
                    "and transactions %s are not in this read", recovery.file, lane,
                    recovery.offset, recovery.detail, len(recovery.lost_record_ids),
                    recovery.lost_tx_ids)
        if skipped is not None:
            skipped.append(entry)
    for warning in report.warnings:
        log.warning("lane %s: %s", lane, warning)


def spark_facing(schema: pa.Schema) -> pa.Schema:
    """The stored events schema as Spark hands it back to a Python reader:
    zoned timestamps in UTC (Spark stores instants; the writer's session zone,
    e.g. ``Etc/UTC``, is not part of the type Spark expects)."""
    fields = [field.with_type(pa.timestamp(field.type.unit, tz="UTC"))
              if pa.types.is_timestamp(field.type) and field.type.tz else field
              for field in schema]
    return pa.schema(fields)
