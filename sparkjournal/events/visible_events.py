"""The events a journal holds, as readers must see them: committed records, plus
prepared transactions the commit log says committed (their COMMIT records may
not be written yet); never open, rolled back, aborted or undecided ones.

This is the plain (non-Spark) read used by the jobs' summaries and the tests;
the Spark reader builds on the same visibility rule (resolve.prepared_outcomes).
"""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq

from ..journal.journal import Journal
from ..journal.lanes import list_lanes
from . import event_records
from .deletions import ROW_COLUMN
from .lane_deletes import lane_deletions, pending_deletions
from .node import node_roots, read_node_id
from .page_records import live_pages
from .read_columns import METADATA
from .resolve import Outcome, prepared_outcomes


def lane_event_records(snapshot, node: str | None, lane: str):
    """Visible EVENTS records of one lane snapshot, committed ones first."""
    for record in snapshot.records():
        if record.user_type == event_records.EVENTS:
            yield record
    if node is None:
        return
    for tx_id, fate in prepared_outcomes(snapshot, node, lane).items():
        if fate is Outcome.COMMITTED:
            for record in snapshot.prepared_records(tx_id):
                if record.user_type == event_records.EVENTS:
                    yield record


def read_table(path: str, **options) -> pa.Table | None:
    """Every visible event under ``path`` (all node roots seen from here) as one
    table (paged ones first), older records padded with nulls for columns added
    later, deleted rows left out; None if the journal holds no events. Copies
    the bodies: the result outlives the snapshots."""
    batches = []
    for lane, node in node_lanes(path):
        deleted_by_requests = pending_deletions(lane)         # before the snapshot
        with Journal.read(lane, **options) as snapshot:
            deletions = lane_deletions(snapshot, deleted_by_requests)
            for ref in live_pages(snapshot):
                table = deletions.filter_rows(pq.read_table(ref.path(lane)))
                batches += table.drop_columns(METADATA.names).to_batches()   # a page file holds them all
            for record in lane_event_records(snapshot, node, os.path.basename(lane)):
                batch = deletions.apply(event_records.read_body(bytes(record.body))[0],
                                        record.record_id)
                if batch is not None:
                    batches.append(batch.drop_columns([c for c in batch.schema.names
                                                       if c == ROW_COLUMN]))
    if not batches:
        return None
    tables = [pa.Table.from_batches([b.replace_schema_metadata(None)]) for b in batches]
    return pa.concat_tables(tables, promote_options="default")


def node_lanes(path: str):
    """(lane folder, its root's node id) of every lane of every node root of
    ``path`` visible from here."""
    for root in node_roots(path):
        node = read_node_id(root)
        for lane in list_lanes(root):
            yield lane, node                      # list_lanes gives root/lane paths


def lanes_of(path: str) -> list[str]:
    return [lane for lane, _node in node_lanes(path)]
