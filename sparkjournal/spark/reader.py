"""The batch reader of the ``sparkjournal`` data source:

    spark.read.format("sparkjournal").load(path)

One input partition per lane (every node root of ``path`` visible from the
driver: one machine, local-cluster, a shared mount). ``read`` yields Arrow
record batches straight from the lane's memory-mapped bodies - the events'
columns as the journal's schema (columns a record predates come back null),
plus metadata columns: the batch id, the batch's commit time, the host and lane
that hold it and the record id. Visibility is the write path's
(visible_events.py): committed records and prepared transactions the commit log
committed; a torn tail ends a lane; a corrupt record fails the read naming the
file and offset.
"""
from __future__ import annotations

import dataclasses
import datetime
import os

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from ..journal.journal import Journal
from . import event_records
from .resolve import commit_log
from .visible_events import lane_event_records, node_lanes

METADATA = pa.schema([("_batch_id", pa.int64()), ("_commit_time", pa.timestamp("us", tz="UTC")),
                      ("_host", pa.string()), ("_lane", pa.string()), ("_record_id", pa.int64())])


@dataclasses.dataclass
class LanePartition(InputPartition):
    lane: str               # the lane folder
    node: str | None        # its root's node id
    log_uri: str

    def __init__(self, lane: str, node: str | None, log_uri: str):
        super().__init__(lane)
        self.lane, self.node, self.log_uri = lane, node, log_uri


def lane_partitions(path: str, log_uri: str) -> list[LanePartition]:
    return [LanePartition(lane, node, log_uri) for lane, node in node_lanes(path)]


class JournalReader(DataSourceReader):
    def __init__(self, path: str, log_uri: str, events_schema: pa.Schema, journal_options: dict):
        self.path, self.log_uri = path, log_uri
        self.events_schema = events_schema
        self.journal_options = journal_options

    def partitions(self):
        return lane_partitions(self.path, self.log_uri)

    def read(self, partition: LanePartition):
        lane = os.path.basename(partition.lane)
        host = (partition.node or "").rpartition("@")[2] or None
        log = commit_log(partition.log_uri)
        snapshot = Journal.read(partition.lane, **self.journal_options)
        try:
            for record in lane_event_records(snapshot, partition.node, lane):
                batch, query, batch_id = event_records.read_body(record.body)
                decision = log.decision(query, batch_id) if query is not None else None
                committed = (datetime.datetime.fromtimestamp(decision.committed_at_ms / 1e3,
                                                             datetime.timezone.utc)
                             if decision else None)
                yield conform(batch, self.events_schema,
                              [batch_id, committed, host, lane, record.record_id])
        finally:
            snapshot.close()


def conform(batch: pa.RecordBatch, schema: pa.Schema, metadata: list) -> pa.RecordBatch:
    """``batch`` as exactly ``schema`` (nulls for columns it predates) plus the
    metadata columns, each a constant for the whole batch."""
    rows = batch.num_rows
    columns = []
    for field in schema:
        index = batch.schema.get_field_index(field.name)
        if index < 0:
            columns.append(pa.nulls(rows, field.type))
        else:
            column = batch.column(index)
            columns.append(column if column.type == field.type else column.cast(field.type))
    for field, value in zip(METADATA, metadata):
        columns.append(pa.repeat(pa.scalar(value, field.type), rows))
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(list(schema) + list(METADATA)))
