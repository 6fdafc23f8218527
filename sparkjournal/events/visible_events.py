"""The events a journal holds, as readers must see them: committed records, plus
prepared transactions the commit log says committed (their COMMIT records may
not be written yet); never open, rolled back, aborted or undecided ones.

This is the plain (non-Spark) read used by the jobs' summaries and the tests;
the Spark reader builds on the same visibility rule (resolve.prepared_outcomes).
"""
from __future__ import annotations

import os

import pyarrow as pa

from ..errors import SparkJournalError
from ..journal.journal import Journal
from ..journal.lanes import list_lanes
from . import event_records
from .commit_log import default_log_uri
from .deletions import ROW_COLUMN
from .lane_deletes import lane_deletions, pending_deletions
from .node import node_roots, read_node_id
from .page_records import live_pages
from .page_scan import read_page
from .read_columns import METADATA, full_schema
from .resolve import Outcome, commit_log, prepared_outcomes


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


def read_table(path: str, log_uri: str | None = None, **options) -> pa.Table | None:
    """Every visible event under ``path`` (all node roots seen from here) as one
    table (paged ones first), older records padded with nulls for columns added
    later, deleted rows left out; None if the journal holds no events. Copies
    the bodies: the result outlives the snapshots. Page files are read by
    page_scan.read_page, as the journal's events schema as stored (the commit
    log's at ``log_uri``, default ``<root>/_commits``, read only when a lane
    has a page): one whose footer disagrees with its PAGE record or that schema
    raises PageFileError, as in every reader."""
    batches = []
    events_schema = None
    for lane, node in node_lanes(path):
        deleted_by_requests = pending_deletions(lane)         # before the snapshot
        with Journal.read(lane, **options) as snapshot:
            deletions = lane_deletions(snapshot, deleted_by_requests)
            for ref in live_pages(snapshot):
                if events_schema is None:
                    events_schema = _events_schema(path, log_uri)
                for batch in read_page(lane, ref, full_schema(events_schema), deletions):
                    batches.append(batch.drop_columns(METADATA.names))
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


def _events_schema(path: str, log_uri: str | None) -> pa.Schema:
    uri = log_uri or default_log_uri(path)
    stored = commit_log(uri).read_schema()
    if stored is None:
        raise SparkJournalError(f"the journal at {path} holds page files but its commit log {uri} "
                                f"has no events schema (schema.arrow) to read them as: pass the "
                                f"journal's log_uri")
    return stored


def node_lanes(path: str):
    """(lane folder, its root's node id) of every lane of every node root of
    ``path`` visible from here."""
    for root in node_roots(path):
        node = read_node_id(root)
        for lane in list_lanes(root):
            yield lane, node                      # list_lanes gives root/lane paths


def lanes_of(path: str) -> list[str]:
    return [lane for lane, _node in node_lanes(path)]
