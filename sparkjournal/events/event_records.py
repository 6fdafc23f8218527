"""How events are stored in a lane: one journal record per piece of an Arrow
record batch, body = an Arrow IPC stream (schema + one batch), user type EVENTS.

The schema's metadata carries the batch the piece belongs to (query id and batch
id) and the min/max of its cheap columns (pruning.py), so a record is self-describing after its transaction committed, when no
PREPARE is left to say which batch it came from. Pieces are cut to at most
``piece_bytes``: the write buffer (the group-commit fast path), or up to
RECORD_BYTES where data files hold four of those (such a record is written
alone and synced). Every stored record costs its reader a schema, its vectors
and a batch of its own: a journal of 2,000-row records aggregated ~11% slower
than the same events in records of 16,000 rows. A single row too big for a
piece still works, through the large-record path.
"""
from __future__ import annotations

import struct

import pyarrow as pa

from ..format import layout
from ..format.constants import SCHEMA_METADATA, USER_TYPES
from .deletions import without_rows
from .pruning import META_STATS, column_stats

EVENTS = USER_TYPES.EVENTS
META_QUERY = SCHEMA_METADATA.META_QUERY.encode()
META_BATCH = SCHEMA_METADATA.META_BATCH.encode()
IPC_OVERHEAD = 4096          # schema message, framing and padding per record, generously
RECORD_BYTES = 4 << 20       # the largest piece, where data files are large enough
_CONTINUATION = 0xFFFFFFFF
_MESSAGE_PREFIX = struct.Struct("<Ii")   # continuation marker, metadata length
_BATCH_MAX = (1 << 63) - 1               # EVENTS.md: a batch tag is in 0..2^63-1


def tag(batch: pa.RecordBatch, query: str, batch_id: int) -> pa.RecordBatch:
    metadata = dict(batch.schema.metadata or {})
    metadata[META_QUERY] = query.encode()
    metadata[META_BATCH] = str(batch_id).encode()
    metadata[META_STATS] = column_stats(batch)
    return batch.replace_schema_metadata(metadata)


def piece_bytes(config) -> int:
    """Most bytes of one stored piece under a journal ``config``: at least the
    write buffer, up to RECORD_BYTES while a quarter of a data file holds it."""
    return max(config.bufferSize,
               min(RECORD_BYTES, (config.fileSize - layout.FILE_HEADER_SIZE) // 4))


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


def split_body(body) -> tuple[pa.Schema, pa.ipc.Message]:
    """(the stored schema, with the record's metadata; the batch message, not
    yet decoded) of an EVENTS body. Reads the two IPC messages where they lie:
    no stream reader per record (it cost ~3x as much at 2,000 rows per record).
    Raises pyarrow.ArrowInvalid (EVENTS.md's *damaged*) for a body that is
    not an IPC stream, whose second message is not a RecordBatch, or whose
    RecordBatch is compressed (no writer compresses; EVENTS.md)."""
    buffer = pa.py_buffer(body)
    if buffer.size < _MESSAGE_PREFIX.size:
        raise pa.ArrowInvalid(f"an events body of {buffer.size} bytes is not an Arrow IPC stream")
    marker, length = _MESSAGE_PREFIX.unpack_from(buffer, 0)
    # the stream format since Arrow 0.15: a continuation marker, then the length
    end = _MESSAGE_PREFIX.size + length if marker == _CONTINUATION else 4 + marker
    schema = pa.ipc.read_schema(pa.ipc.read_message(buffer))
    message = pa.ipc.read_message(buffer.slice(end))
    if message.type != "record batch":
        raise pa.ArrowInvalid(f"an events body's second message is a {message.type}, "
                              f"not a record batch")
    if _compressed(message):
        raise pa.ArrowInvalid("an events body's record batch is compressed: no writer of "
                              "this format compresses (EVENTS.md), the body is damaged")
    return schema, message


def _compressed(message: pa.ipc.Message) -> bool:
    """Whether a RecordBatch message names a body compression: its Message
    flatbuffer's header (field 2), a RecordBatch table, has field 3
    (``compression``) set. pyarrow checked the flatbuffer when it read the
    message; a table it cannot walk is refused as damaged all the same."""
    meta = message.metadata
    try:
        header_at = _field_at(meta, struct.unpack_from("<I", meta, 0)[0], 2)
        if header_at is None:
            raise pa.ArrowInvalid("an events body's record batch message has no header")
        header = header_at + struct.unpack_from("<I", meta, header_at)[0]
        return _field_at(meta, header, 3) is not None
    except struct.error:
        raise pa.ArrowInvalid("an events body's record batch message is not a flatbuffer "
                              "Arrow can have read") from None


def _field_at(buffer, table: int, index: int) -> int | None:
    """Where field ``index`` of the flatbuffer table at ``table`` lies, None if absent."""
    vtable = table - struct.unpack_from("<i", buffer, table)[0]
    size = struct.unpack_from("<H", buffer, vtable)[0]
    if 4 + 2 * index + 2 > size:
        return None
    offset = struct.unpack_from("<H", buffer, vtable + 4 + 2 * index)[0]
    return table + offset if offset else None


def batch_of(schema: pa.Schema) -> tuple[str | None, int | None]:
    """(query, batch id) a record's stored schema names; (None, None) for an
    untagged body (no query, an empty one, or no batch id: EVENTS.md). Raises
    pyarrow.ArrowInvalid (*damaged*) for a query that is not UTF-8 or a batch
    id that is not ASCII decimal digits, without leading zeros, of a value in
    0..2^63-1 (``int()``'s signs, spaces, underscores and non-ASCII digits are
    refused)."""
    metadata = schema.metadata or {}
    query, batch_id = metadata.get(META_QUERY), metadata.get(META_BATCH)
    if query:
        try:
            query = query.decode("utf-8")
        except UnicodeDecodeError:
            raise pa.ArrowInvalid(f"an events body's query tag {query[:80]!r} is not "
                                  f"UTF-8: the body is damaged") from None
    if batch_id is not None:
        if not batch_id.isdigit() or len(batch_id) > 19 or \
                (batch_id.startswith(b"0") and batch_id != b"0") or int(batch_id) > _BATCH_MAX:
            raise pa.ArrowInvalid(f"an events body's batch tag {batch_id[:80]!r} is not a "
                                  f"decimal integer in 0..2^63-1 without sign or leading "
                                  f"zeros: the body is damaged")
        batch_id = int(batch_id)
    if not query or batch_id is None:
        return None, None
    return query, batch_id


def read_body(body) -> tuple[pa.RecordBatch, str | None, int | None]:
    """(batch, query, batch id) of an EVENTS body; zero-copy over ``body``."""
    schema, message = split_body(body)
    return (pa.ipc.read_record_batch(message, schema),) + batch_of(schema)


def rewrite_body(body, deleted: set) -> bytes | None:
    """An events record body with the ``deleted`` original positions dropped
    (deletions.without_rows), its schema metadata (query, batch, column
    stats: still valid bounds) kept; None if no row is left."""
    batch = read_body(body)[0]
    kept = without_rows(batch, deleted)
    if not kept.num_rows:
        return None
    kept = kept.replace_schema_metadata(batch.schema.metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, kept.schema) as writer:
        writer.write_batch(kept)
    return sink.getvalue().to_pybytes()
