"""The C codec (sparkjournal._sjnative) behind the same API as codec_python.

Importing this module raises ImportError when the C core is not built; the
codec seam (codec.py) then falls back to the Python codec. Buffers are passed
to C without copying (ffi.from_buffer): bytes, bytearray, mmap, memoryview,
pyarrow.Buffer all work. The C calls run with the GIL released.
"""
from __future__ import annotations

from typing import Any

from sparkjournal._sjnative import ffi, lib

from . import layout
from .batch_args import batch_range, ids_bytes, offsets_bytes
from .scan_result import ScanResult

CODEC_NAME = "native"

_MIN_RECORD = 40
_FIRST_SCAN_CHUNK = 1 << 14
# Column arrays are not zeroed: sj_scan writes the first `got` entries and only
# those are read (_column). Zeroing them cost more than the scan of small records.
_uncleared = ffi.new_allocator(should_clear_after_alloc=False)
_COLUMNS = (("types", "uint8_t[]", "B", 1), ("flags", "uint8_t[]", "B", 1),
            ("user_types", "uint16_t[]", "H", 2), ("body_lens", "uint32_t[]", "I", 4),
            ("counts", "uint32_t[]", "I", 4), ("record_ids", "uint64_t[]", "Q", 8),
            ("tx_ids", "uint64_t[]", "Q", 8), ("offsets", "uint64_t[]", "Q", 8))


def crc32c(data: Any, crc: int = 0) -> int:
    if isinstance(data, bytes):
        return lib.sj_crc32c(crc, data, len(data))
    with ffi.from_buffer(data) as view:
        return lib.sj_crc32c(crc, view, len(view))


def encode_record(buf: Any, pos: int, type: int, flags: int, user_type: int, file_id32: int,
                  record_id: int, tx_id: int, count: int, body: Any) -> int:
    out = ffi.from_buffer(buf, require_writable=True)
    body_ptr = body if isinstance(body, bytes) else ffi.from_buffer(body)
    new_pos = lib.sj_encode_record(out, len(out), pos, type, flags, user_type, file_id32,
                                   record_id, tx_id, count, body_ptr, len(body_ptr))
    if new_pos < 0:
        if new_pos == -2:
            raise ValueError(f"record position {pos} is not 8-byte aligned")
        if new_pos == -3:
            raise ValueError("a record body is limited to 4 GiB - 1 bytes")
        raise ValueError(f"a record of {len(body_ptr)} body bytes does not fit at {pos} "
                         f"in a buffer of {len(out)} bytes")
    return new_pos


def encode_batch(buf: Any, pos: int, type: int, user_type: int, file_id32: int, tx_id: int,
                 record_ids: Any, data: Any, offsets: Any, start: int = 0,
                 stop: int | None = None, offset_width: int | None = None,
                 id_base: int = 0) -> tuple[int, int]:
    flat, width, n_offsets = offsets_bytes(offsets, offset_width)
    start, stop = batch_range(n_offsets, start, stop, id_base)
    ids = ids_bytes(record_ids, stop, id_base)
    out = ffi.from_buffer(buf, require_writable=True)
    body_data = ffi.from_buffer(data if data is not None else b"")
    written = ffi.new("size_t *")
    new_pos = lib.sj_encode_batch(
        out, len(out), pos, type, user_type, file_id32, tx_id,
        record_ids if ids is None else 0,
        ffi.NULL if ids is None else ffi.cast("uint64_t *", ffi.from_buffer(ids)), id_base,
        body_data, len(body_data), ffi.from_buffer(flat), width, start, stop, written)
    if new_pos < 0:
        if new_pos == -2:
            raise ValueError(f"record position {pos} is not 8-byte aligned")
        bad = start + written[0]
        raise ValueError(f"body {bad}: offsets are out of order or past the "
                         f"{len(body_data)} data bytes")
    return new_pos, written[0]


def copy_records(buf: Any, pos: int, file_id32: int, src: Any, src_offsets: Any, index: Any,
                 types: Any, counts: Any = None) -> int:
    n = len(index)
    if len(types) < n or (counts is not None and len(counts) < n):
        raise ValueError("copy_records: fewer types or counts than records")
    if not n:
        return pos
    out = ffi.from_buffer(buf, require_writable=True)
    # every buffer is held by a name until the call returns (a cast keeps nothing alive)
    offsets_c, index_c, types_c = (ffi.from_buffer(src_offsets), ffi.from_buffer(index),
                                   ffi.from_buffer(types))
    if len(offsets_c) != 8 * len(src_offsets) or len(index_c) != 4 * n:
        raise ValueError("copy_records: offsets must be u64 and indices u32 buffers")
    counts_c = ffi.NULL if counts is None else ffi.from_buffer(counts)
    with ffi.from_buffer(src) as source:
        new_pos = lib.sj_copy_records(
            out, len(out), pos, file_id32, source, len(source),
            ffi.cast("uint64_t *", offsets_c), len(src_offsets),
            ffi.cast("uint32_t *", index_c), types_c,
            ffi.NULL if counts is None else ffi.cast("uint32_t *", counts_c), n)
    if new_pos < 0:
        raise ValueError({-1: f"the records do not fit at {pos} in a buffer of {len(out)} bytes",
                          -2: f"record position {pos} is not 8-byte aligned"}.get(
                              new_pos, "a record index or source record lies outside the source"))
    return new_pos


def record_crc_ok(buf: Any, pos: int, body_len: int) -> bool:
    stored = layout.RECORD_HEADER.unpack_from(buf, pos)[0]
    with ffi.from_buffer(buf) as view:
        return lib.sj_crc32c(0, view + pos + 4, layout.RECORD_HEADER_SIZE - 4 + body_len) == stored


def scan(buf: Any, start: int, file_id32: int, verify_crc: bool = True) -> ScanResult:
    with ffi.from_buffer(buf) as view:
        length = len(view)
        state = ffi.new("struct sj_scan_state *")
        state.pos = start
        state.first_foreign = -1
        state.clean_end = start
        most = max(length - start, 0) // _MIN_RECORD + 1
        chunks: list[tuple[list[Any], int]] = []
        cap = min(most, _FIRST_SCAN_CHUNK)
        while not state.done:
            arrays = [_uncleared(ctype, cap) for _name, ctype, _code, _size in _COLUMNS]
            got = lib.sj_scan(view, length, file_id32, 1 if verify_crc else 0, state, cap, *arrays)
            chunks.append((arrays, got))
            cap = min(max(most - state.n, 1), cap * 2)
        reason = ffi.string(state.reason).decode("ascii") if state.first_foreign >= 0 else ""
        return ScanResult(
            n=state.n, clean_end=state.clean_end, first_foreign=state.first_foreign,
            foreign_reason=reason, n_clean=state.n_clean, scan_end=length & ~7,
            **{name: _column(chunks, index, code, size)
               for index, (name, _ctype, code, size) in enumerate(_COLUMNS)})


def _column(chunks: list[tuple[list[Any], int]], index: int, code: str, size: int) -> memoryview:
    parts = [ffi.buffer(arrays[index], got * size) for arrays, got in chunks if got]
    if len(parts) == 1:
        return memoryview(parts[0]).cast(code)
    return memoryview(b"".join(parts)).cast(code)
