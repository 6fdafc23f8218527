"""The lanes the maintenance benchmarks work on, made without Spark.

``half_dead_lane``: plain records, every other one deleted (something to
compact). ``events_root``: a node root as the sink leaves it - a commit log
holding the events' schema and a decision per batch, and in ``lane-000``
committed records of tagged Arrow events (``land_batch``) - so the real
paging code pages it.
``evict``: a lane's files out of the page cache, as the sink leaves them
(its data files are written with O_DIRECT, never through the cache).
"""
from __future__ import annotations

import os

import pyarrow as pa

from ...events import event_records
from ...events.commit_log import CommitLog, default_log_uri
from ...events.node import node_id
from ...journal.journal import Journal

BODY = 4096
EVENT_PAYLOAD = 200                      # bytes of payload per event, as the sink benchmark's


def half_dead_lane(lane: str, nbytes: int, body_size: int = BODY, **options) -> int:
    """Writes ``nbytes`` of records of ``body_size`` bytes (unsynced, one
    flush) and deletes every other one; returns the highest record id."""
    count = max(nbytes // body_size, 16)
    body = os.urandom(body_size)
    with Journal.open(lane, **options) as journal:
        for record_id in range(1, count + 1):
            journal.append_add(record_id, body, sync=False)
        for record_id in range(2, count + 1, 2):
            journal.append_delete(record_id, sync=False)
        journal.flush()
    return count


def events_root(root: str, nbytes: int, **options) -> tuple[str, str, str, int]:
    """A root whose ``lane-000`` holds about ``nbytes`` of committed events in
    records as big as the sink writes under ``options``, one batch per
    record; (lane, node id, commit log URI, the lane's highest record id)."""
    node, log_uri = node_id(root), default_log_uri(root)
    log = CommitLog(log_uri)
    lane = os.path.join(root, "lane-000")
    with Journal.open(lane, **options) as journal:
        piece = event_records.piece_bytes(journal.config) - 2 * event_records.IPC_OVERHEAD
        rows = max(1, piece // (EVENT_PAYLOAD + 16))
        for batch in range(max(1, nbytes // piece)):
            first = batch * rows
            events = pa.table({"id": pa.array(range(first, first + rows), pa.int64()),
                               "payload": pa.array([b"p" * EVENT_PAYLOAD] * rows, pa.binary())})
            land_batch(journal, log, "bench", batch, events)
        journal.flush()
        last = journal.max_record_id
    return lane, node, log_uri, last


def land_batch(journal: Journal, log: CommitLog, query: str, batch: int, events: pa.Table,
               rows_per_record: int | None = None, sync: bool = False) -> None:
    """Lands ``events`` as batch ``batch`` of ``query`` as the sink leaves a
    decided batch: the commit log holds the events' schema (from batch 0 on),
    the lane one committed record of tagged events per ``rows_per_record``
    rows (None: per batch of the table), and the log the batch's decision."""
    if batch == 0:
        log.write_schema(events.schema)
    journal.append_batch([event_records.tag(b, query, batch)
                          for b in events.to_batches(max_chunksize=rows_per_record)],
                         user_type=event_records.EVENTS, sync=sync)
    log.record(query, batch, [])


def data_files(lane: str) -> list[str]:
    return sorted(os.path.join(lane, n) for n in os.listdir(lane) if n.endswith(".sjd"))


def evict(lane: str) -> None:
    """Writes the lane's files back and drops them from the page cache."""
    for folder, _dirs, names in os.walk(lane):
        for name in names:
            fd = os.open(os.path.join(folder, name), os.O_RDONLY)
            try:
                os.fdatasync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
