"""The pure-Python codec: the same API and bytes as the C core, much slower.

Used when sparkjournal._sjnative is not built, or when SPARKJOURNAL_CODEC=python.
Contracts (shared with codec_native): records start 8-byte aligned; a record
that does not fit is not started; scanning never reads past the buffer and
allocates nothing sized by a length read from it.
"""
from __future__ import annotations

import re
import struct
from array import array
from typing import Any

from . import layout
from .batch_args import batch_range, ids_bytes, offsets_bytes
from .crc32c_py import crc32c
from .scan_result import ScanResult

CODEC_NAME = "python"

_HEADER = layout.RECORD_HEADER
_HSIZE = layout.RECORD_HEADER_SIZE
_U32 = struct.Struct("<I")
_NONZERO = re.compile(rb"[^\x00]")


def _put_record(out: memoryview, pos: int, type_: int, flags: int, user_type: int,
                file_id32: int, record_id: int, tx_id: int, count: int, body: memoryview) -> int:
    body_len = body.nbytes
    size = layout.record_size(body_len)
    try:
        _HEADER.pack_into(out, pos, 0, type_, flags, user_type, file_id32, body_len,
                          record_id, tx_id, count, 0)
    except struct.error as error:
        raise OverflowError(f"a record field is out of range: {error}") from None
    body_end = pos + _HSIZE + body_len
    out[pos + _HSIZE:body_end] = body
    out[body_end:pos + size] = bytes(pos + size - body_end)
    _U32.pack_into(out, pos, crc32c(out[pos + 4:body_end]))
    return pos + size


def _writable(buf: Any) -> memoryview:
    view = memoryview(buf)
    if view.readonly:
        raise TypeError("the output buffer is read-only")
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def encode_record(buf: Any, pos: int, type: int, flags: int, user_type: int, file_id32: int,
                  record_id: int, tx_id: int, count: int, body: Any) -> int:
    out = _writable(buf)
    body_view = memoryview(body).cast("B")
    if pos % layout.RECORD_ALIGN:
        raise ValueError(f"record position {pos} is not 8-byte aligned")
    if body_view.nbytes > 0xFFFFFFFF:
        raise ValueError("a record body is limited to 4 GiB - 1 bytes")
    if pos < 0 or pos + layout.record_size(body_view.nbytes) > out.nbytes:
        raise ValueError(f"a record of {body_view.nbytes} body bytes does not fit at {pos} "
                         f"in a buffer of {out.nbytes} bytes")
    return _put_record(out, pos, type, flags, user_type, file_id32, record_id, tx_id,
                       count, body_view)


def encode_batch(buf: Any, pos: int, type: int, user_type: int, file_id32: int, tx_id: int,
                 record_ids: Any, data: Any, offsets: Any, start: int = 0,
                 stop: int | None = None, offset_width: int | None = None,
                 id_base: int = 0) -> tuple[int, int]:
    out = _writable(buf)
    if pos % layout.RECORD_ALIGN:
        raise ValueError(f"record position {pos} is not 8-byte aligned")
    flat, width, n_offsets = offsets_bytes(offsets, offset_width)
    start, stop = batch_range(n_offsets, start, stop, id_base)
    ids = ids_bytes(record_ids, stop, id_base)
    positions = flat.cast("q" if width == 8 else "i")
    id_list = ids.cast("Q") if ids is not None else None
    body_data = memoryview(data if data is not None else b"").cast("B")
    cap = out.nbytes
    written = 0
    for i in range(start, stop):
        lo, hi = positions[i], positions[i + 1]
        if lo < 0 or hi < lo or hi > body_data.nbytes or hi - lo > 0xFFFFFFFF:
            raise ValueError(f"body {i}: offsets {lo}..{hi} are out of order or past the "
                             f"{body_data.nbytes} data bytes")
        if pos + layout.record_size(hi - lo) > cap:
            break
        record_id = (id_list[i - id_base] if id_list is not None
                     else (record_ids + i - id_base) & 0xFFFFFFFFFFFFFFFF)
        pos = _put_record(out, pos, type, 0, user_type, file_id32, record_id, tx_id, 0,
                          body_data[lo:hi])
        written += 1
    return pos, written


def copy_records(buf: Any, pos: int, file_id32: int, src: Any, src_offsets: Any, index: Any,
                 types: Any, counts: Any = None) -> int:
    out = _writable(buf)
    source = memoryview(src).cast("B")
    if len(types) < len(index) or (counts is not None and len(counts) < len(index)):
        raise ValueError("copy_records: fewer types or counts than records")
    if pos % layout.RECORD_ALIGN:
        raise ValueError(f"record position {pos} is not 8-byte aligned")
    for k, i in enumerate(index):
        if i >= len(src_offsets) or src_offsets[i] + _HSIZE > source.nbytes:
            raise ValueError("a record index or source record lies outside the source")
        offset = src_offsets[i]
        _crc, _type, flags, user_type, _fid, body_len, record_id, tx_id, _count, _cc = \
            _HEADER.unpack_from(source, offset)
        if body_len > source.nbytes - offset - _HSIZE:
            raise ValueError("a record index or source record lies outside the source")
        if pos + layout.record_size(body_len) > out.nbytes:
            raise ValueError(f"the records do not fit at {pos} in a buffer of {out.nbytes} bytes")
        type_ = types[k]
        body = source[offset + _HSIZE:offset + _HSIZE + body_len]
        pos = _put_record(out, pos, type_, flags, user_type, file_id32, record_id,
                          tx_id if type_ >= layout.ADD_TX else 0,
                          counts[k] if counts is not None else 0, body)
    return pos


def record_crc_ok(buf: Any, pos: int, body_len: int) -> bool:
    view = memoryview(buf).cast("B")
    return _crc_matches(view, pos, body_len, _U32.unpack_from(view, pos)[0])


def _crc_matches(view: memoryview, pos: int, body_len: int, crc: int) -> bool:
    """The record CRC covers everything after the CRC field up to the end of the body."""
    return crc32c(view[pos + 4:pos + _HSIZE + body_len]) == crc


def _check(view: memoryview, length: int, pos: int, file_id32: int, verify_crc: bool,
           want_reason: bool) -> tuple[int, str]:
    """(record size, "") for a valid record of this file at pos, else (0, reason).
    With want_reason False it is the after-damage prefilter (file id before crc)."""
    if length - pos < _HSIZE:
        return 0, "header cut off by end of file"
    crc, type_, flags, _ut, fid, body_len = struct.unpack_from("<IBBHII", view, pos)
    if type_ == 0 or type_ > layout.ROLLBACK:
        return 0, f"bad type {type_}"
    if flags & ~layout.KNOWN_FLAGS:
        return 0, f"bad flags 0x{flags:02x}"
    if body_len > length - pos - _HSIZE:
        return 0, f"body length {body_len} past end of file"
    if not want_reason and fid != file_id32:
        return 0, "other file id"
    if verify_crc and not _crc_matches(view, pos, body_len, crc):
        return 0, "crc mismatch"
    if fid != file_id32:
        return 0, f"record of file id {fid} (stale)"
    return layout.record_size(body_len), ""


def _next_nonzero_word(view: memoryview, pos: int, end: int) -> int:
    match = _NONZERO.search(view, pos, end)
    return end if match is None else match.start() & ~7


def _next_candidate(view: memoryview, pos: int, end: int, fid_pattern: re.Pattern | None) -> int:
    """First 8-aligned offset >= pos whose file-id field could match (after damage)."""
    if fid_pattern is None:
        return _next_nonzero_word(view, pos, end)
    search_from = pos + 8
    while True:
        match = fid_pattern.search(view, search_from)
        if match is None:
            return end
        at = match.start() - 8
        if at % 8 == 0:
            return at
        search_from = match.start() + 1


def scan(buf: Any, start: int, file_id32: int, verify_crc: bool = True) -> ScanResult:
    view = memoryview(buf)
    view = view.cast("B") if view.format != "B" or view.ndim != 1 else view
    length = view.nbytes
    end = length & ~7
    pos = (start + 7) & ~7
    cols = {name: array(code) for name, code in (
        ("types", "B"), ("flags", "B"), ("user_types", "H"), ("body_lens", "I"),
        ("counts", "I"), ("record_ids", "Q"), ("tx_ids", "Q"), ("offsets", "Q"))}
    first_foreign, clean_end, reason, n_clean = -1, start, "", 0
    fid_pattern = re.compile(re.escape(_U32.pack(file_id32))) if file_id32 else None
    while True:
        if first_foreign < 0:
            pos = _next_nonzero_word(view, pos, end)
        else:
            pos = _next_candidate(view, pos, end, fid_pattern)
        if pos >= end:
            break
        size, why = _check(view, length, pos, file_id32, verify_crc, first_foreign < 0)
        if not size:
            if first_foreign < 0:
                first_foreign, reason, n_clean = pos, why, len(cols["offsets"])
            pos += 8
            continue
        (_crc, type_, flags, user_type, _fid, body_len, record_id, tx_id, count,
         _cc) = _HEADER.unpack_from(view, pos)
        for name, value in (("types", type_), ("flags", flags), ("user_types", user_type),
                            ("body_lens", body_len), ("counts", count),
                            ("record_ids", record_id), ("tx_ids", tx_id), ("offsets", pos)):
            cols[name].append(value)
        pos += size
        if first_foreign < 0:
            clean_end = pos
    n = len(cols["offsets"])
    return ScanResult(n=n, clean_end=clean_end, first_foreign=first_foreign,
                      foreign_reason=reason, n_clean=n if first_foreign < 0 else n_clean,
                      scan_end=end, **cols)
