"""A node root of events with pages, made without Spark (helpers for
test_page_tools.py and test_page_drop.py).

``make_root`` writes what the Spark sink leaves behind, directly: NODE_ID, the
commit log's schema and one decision per batch, and in ``lane-000`` one
committed record of events (tagged with its query and batch) per 100 rows;
``page`` pages the lane with the real paging code (page_lane, forced), so the
page files and PAGE records are exactly what paging writes.
"""
from __future__ import annotations

import os

import pyarrow as pa

from sparkjournal import Journal, read_table
from sparkjournal.config import load_config
from sparkjournal.events.commit_log import CommitLog, default_log_uri
from sparkjournal.events.node import node_id
from sparkjournal.events.page_records import PAGES, live_page_records
from sparkjournal.events.requests import submit
from sparkjournal.maintenance.lane_requests import apply_now
from sparkjournal.maintenance.paging import page_lane
from sparkjournal.tools.bench.lanes import land_batch

SMALL = {"fileSize": "64k", "bufferSize": "16k", "pageSizeBytes": "20k"}
ROWS_PER_RECORD = 100


def make_root(path: str, batches: int = 4, rows: int = 500) -> tuple[str, str, str]:
    """(lane, node id, commit log URI) of a new root holding ``batches`` batches of ``rows``."""
    node, log_uri = node_id(path), default_log_uri(path)
    log = CommitLog(log_uri)
    lane = os.path.join(path, "lane-000")
    with Journal.open(lane, **SMALL) as journal:
        for batch in range(batches):
            start = batch * rows
            table = pa.table({"id": pa.array(range(start, start + rows), pa.int64()),
                              "payload": [f"p{i % 7}" * 20 for i in range(start, start + rows)]})
            land_batch(journal, log, "q", batch, table, ROWS_PER_RECORD, sync=True)
    return lane, node, log_uri


def page(lane: str, node: str, log_uri: str, force: bool = True, **options):
    """Paging's pass over the lane (drops, orphans); with ``force`` it pages one page too."""
    return page_lane(lane, node, log_uri, load_config({**SMALL, **options}), force=force)


def pages(lane: str) -> list:
    """(PAGE record id, page) of the lane's live pages."""
    with Journal.read(lane) as snapshot:
        return live_page_records(snapshot)


def page_files(lane: str) -> list[str]:
    folder = os.path.join(lane, PAGES)
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def delete(lane: str, records: dict) -> None:
    """Deletes {record id: None (whole) | [row positions]} through a delete request."""
    submit(lane, "delete", {"records": {str(rid): rows for rid, rows in records.items()}})
    assert apply_now(lane, load_config(SMALL))


def rows(path: str) -> list[tuple]:
    """Every visible event under the root, sorted."""
    table = read_table(path)
    return sorted(zip(*table.to_pydict().values())) if table is not None else []
