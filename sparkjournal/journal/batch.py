"""The batch call: many records in one call into C.

Bodies are flattened once into (data, offsets) -- the layout of an Arrow binary
array, which is taken as it is, without a copy -- and the C encoder fills the
write buffer as far as it goes per call. The state learns of the records with
vectorised Arrow arithmetic, not a Python loop, when they are fresh ADDs.
"""
from __future__ import annotations

import itertools

import pyarrow as pa
import pyarrow.compute as pc

from ..format import layout
from ..format.codec import CODEC
from .large import IpcBody


def flatten(bodies) -> tuple[object, object, pa.Array]:
    """(data buffer, int64 offsets buffer, int64 lengths) of the bodies."""
    if isinstance(bodies, pa.RecordBatch) or isinstance(bodies, pa.Table):
        bodies = bodies.to_batches() if isinstance(bodies, pa.Table) else [bodies]
    if isinstance(bodies, (pa.Array, pa.ChunkedArray)):
        array = bodies.combine_chunks() if isinstance(bodies, pa.ChunkedArray) else bodies
        array = array.cast(pa.large_binary()) if array.type != pa.large_binary() else array
    else:
        items = [_as_bytes(ipc_bytes(b) if isinstance(b, pa.RecordBatch) else b) for b in bodies]
        array = pa.array(items, type=pa.large_binary())
    if array.null_count:
        raise ValueError("a body is null: every record needs a body (use b'' for an empty one)")
    if array.offset:
        array = pa.concat_arrays([array])          # re-based copy: offsets start at 0
    _, offsets, data = array.buffers()
    lengths = pc.binary_length(array).cast(pa.int64())
    return (data if data is not None else b""), offsets, lengths


def record_sizes(body_lengths: pa.Array) -> pa.Array:
    """layout.record_size of every body length, vectorised (int64)."""
    lengths = body_lengths.cast(pa.int64())
    return pc.bit_wise_and(pc.add(lengths, layout.RECORD_HEADER_SIZE + layout.RECORD_ALIGN - 1),
                           -layout.RECORD_ALIGN)


def _as_bytes(body):
    """pa.array takes bytes; other buffer-like bodies are copied once into bytes."""
    return body if isinstance(body, bytes) else bytes(memoryview(body))


def ipc_bytes(batch: pa.RecordBatch) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue()


def goes_to_large_store(config, body_len: int) -> bool:
    """The journal's rule for large-store bodies (large.py): above largeRecordSize
    when set, else a record that would not fit a data file after its header."""
    if config.largeRecordSize:
        return body_len > config.largeRecordSize
    return layout.record_size(body_len) > config.fileSize - layout.FILE_HEADER_SIZE


def arrow_bodies(bodies) -> list | None:
    """Record batches as IpcBody, each serialized once, straight into its place
    (the write buffer, the staging buffer of a record written alone, or the
    large body file), never into a buffer of its own first; else None."""
    if isinstance(bodies, (pa.RecordBatch, pa.Table)):
        bodies = bodies.to_batches() if isinstance(bodies, pa.Table) else [bodies]
    if not isinstance(bodies, (list, tuple)) or not bodies or \
            not all(isinstance(b, pa.RecordBatch) for b in bodies):
        return None
    return [IpcBody(b) for b in bodies]


def append_batch(journal, bodies, first_record_id, user_type, tx_id, sync) -> range:
    batches = arrow_bodies(bodies)
    if batches is not None:
        return _one_by_one(journal, batches, first_record_id, user_type, tx_id, sync)
    data, offsets, lengths = flatten(bodies)
    n = len(lengths)
    if n == 0:
        return range(0)
    biggest = pc.max(lengths).as_py()
    if layout.record_size(biggest) > journal.config.bufferSize:
        offs = offsets.to_pybytes()
        bounds = [int.from_bytes(offs[i:i + 8], "little") for i in range(0, len(offs), 8)]
        raw = memoryview(data)
        items = [raw[bounds[i]:bounds[i + 1]] for i in range(n)]
        return _one_by_one(journal, items, first_record_id, user_type, tx_id, sync)
    sizes = record_sizes(lengths)
    starts = pc.subtract(pc.cumulative_sum(sizes), sizes)      # record i's offset in the run
    state = journal._state
    rtype = layout.ADD_TX if tx_id else layout.ADD
    progress = {"done": 0, "first": first_record_id}

    def encode_some(buf, pos, file_id32):
        first = progress["first"]
        if first is None:
            first = progress["first"] = state.max_record_id + 1
        done = progress["done"]
        new_pos, count = CODEC.encode_batch(buf, pos, rtype, user_type, file_id32, tx_id,
                                            first, data, offsets, done, n, offset_width=8)
        progress["done"] = done + count

        def apply(file_id, buffer_start):
            if not count:
                return
            base = buffer_start + pos - starts[done].as_py()
            offs = pc.add(starts.slice(done, count), base).to_pylist()
            lens = lengths.slice(done, count).to_pylist()
            versions = list(zip(itertools.repeat(file_id), offs, lens,
                                itertools.repeat(user_type), itertools.repeat(0)))
            ids = range(first + done, first + done + count)
            if not tx_id and ids.start > state.max_record_id:
                state.put_new(ids.start, versions, file_id)
            elif not tx_id:
                for record_id, version in zip(ids, versions):
                    state.put(record_id, version)
            else:
                for record_id, version in zip(ids, versions):
                    state.tx_record(tx_id, rtype, record_id, file_id, version)
            state.file(file_id).records += count

        return new_pos, done + count == n, apply

    journal._appender.append_many(encode_some, sync)
    return range(progress["first"], progress["first"] + n)


def _one_by_one(journal, items, first_record_id, user_type, tx_id, sync):
    """Some body bypasses the write buffer: append each on its own."""
    ids = []
    for index, body in enumerate(items):
        record_id = journal.next_record_id() if first_record_id is None else first_record_id + index
        if tx_id:
            journal.append_add_tx(tx_id, record_id, body, user_type)
        else:
            journal.append_add(record_id, body, user_type, sync=False)
        ids.append(record_id)
    if sync:
        journal.flush()
    return range(ids[0], ids[-1] + 1)
