"""How events are stored in a lane: one journal record per piece of an Arrow
record batch, body = an Arrow IPC stream (schema + one batch), user type EVENTS.

The schema's metadata carries the batch the piece belongs to (query id and batch
id) and the min/max of its cheap columns (pruning.py), so a record is self-describing after its transaction committed, when no
PREPARE is left to say which batch it came from. Pieces are cut so a record
fits the journal's write buffer (the group-commit fast path); a single row too
big for it still works, through the large-record path.
"""
from __future__ import annotations

import pyarrow as pa

from ..format import layout
from .pruning import META_STATS, column_stats

EVENTS = 1
META_QUERY = b"sparkjournal.query"
META_BATCH = b"sparkjournal.batch"
IPC_OVERHEAD = 4096          # schema message, framing and padding per record, generously


def tag(batch: pa.RecordBatch, query: str, batch_id: int) -> pa.RecordBatch:
    metadata = dict(batch.schema.metadata or {})
    metadata[META_QUERY] = query.encode()
    metadata[META_BATCH] = str(batch_id).encode()
    metadata[META_STATS] = column_stats(batch)
    return batch.replace_schema_metadata(metadata)


def pieces(batch: pa.RecordBatch, max_body: int):
    """Row slices of ``batch`` whose IPC bodies should fit ``max_body`` bytes."""
    budget = max(1, max_body - layout.RECORD_HEADER_SIZE - IPC_OVERHEAD)
    rows = batch.num_rows
    if rows == 0:
        return
    size = batch.nbytes
    if size <= budget:
        yield batch
        return
    step = max(1, int(rows * budget / size))
    for start in range(0, rows, step):
        yield batch.slice(start, step)


def open_body(body) -> tuple[pa.RecordBatchStreamReader, str | None, int | None]:
    """(a reader positioned at the batch, query, batch id) of an EVENTS body:
    the schema and its metadata are parsed, the rows not yet touched."""
    reader = pa.ipc.open_stream(pa.py_buffer(body))
    metadata = reader.schema.metadata or {}
    query = metadata.get(META_QUERY)
    batch_id = metadata.get(META_BATCH)
    return (reader, query.decode() if query else None,
            int(batch_id) if batch_id is not None else None)


def read_body(body) -> tuple[pa.RecordBatch, str | None, int | None]:
    """(batch, query, batch id) of an EVENTS body; zero-copy over ``body``."""
    reader, query, batch_id = open_body(body)
    return reader.read_next_batch(), query, batch_id
