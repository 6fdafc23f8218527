"""Argument normalisation shared by both codecs' encode_batch.

Bodies come as Arrow-style binary columns: ``data`` holds every body back to
back and ``offsets`` holds n+1 positions (int32 for Arrow binary/string, int64
for large_binary/large_string). An untyped buffer (a pyarrow.Buffer, bytes)
does not say its width, so the caller names it with ``offset_width``.
"""
from __future__ import annotations

from typing import Any

_INT_FORMATS = frozenset("bBhHiIlLqQnN")


def offsets_bytes(offsets: Any, offset_width: int | None) -> tuple[memoryview, int, int]:
    """Returns (offsets as a flat byte view, width 4 or 8, number of entries)."""
    view = memoryview(offsets)
    fmt = view.format.lstrip("@=<")
    if view.itemsize in (4, 8) and fmt in _INT_FORMATS:
        width = view.itemsize
        if offset_width not in (None, width):
            raise ValueError(f"offsets hold {width}-byte integers but offset_width={offset_width}")
    elif offset_width in (4, 8):
        width = offset_width
    else:
        raise ValueError("offsets is an untyped buffer: pass offset_width=4 (Arrow binary/"
                         "string) or offset_width=8 (large_binary/large_string)")
    flat = view.cast("B") if view.format != "B" or view.ndim != 1 else view
    return flat, width, flat.nbytes // width


def batch_range(n_offsets: int, start: int, stop: int | None, id_base: int) -> tuple[int, int]:
    """Checks start/stop against a column of n_offsets - 1 bodies."""
    count = max(n_offsets - 1, 0)
    stop = count if stop is None else stop
    if not 0 <= start <= stop <= count:
        raise ValueError(f"records {start}..{stop} are outside the {count} bodies the offsets describe")
    if not 0 <= id_base <= start:
        raise ValueError(f"id_base {id_base} must be from 0 to start ({start})")
    return start, stop


def ids_bytes(record_ids: Any, stop: int, id_base: int) -> memoryview | None:
    """None for an int (the id of body id_base, numbered upward); else a flat
    view of uint64 ids where ids[i - id_base] belongs to body i."""
    if isinstance(record_ids, int):
        if not 0 <= record_ids < 1 << 64:
            raise ValueError(f"record id {record_ids} does not fit in 64 bits")
        return None
    view = memoryview(record_ids)
    flat = view.cast("B") if view.format != "B" or view.ndim != 1 else view
    if flat.nbytes < (stop - id_base) * 8:
        raise ValueError(f"record_ids holds {flat.nbytes // 8} ids, {stop - id_base} needed")
    return flat


def arrow_columns(array: Any) -> tuple[Any, Any, int, int, int]:
    """(data buffer, offsets buffer, offset width, first index, stop index) of a
    pyarrow Binary/String/LargeBinary/LargeString array, without copying."""
    import pyarrow as pa

    kind = array.type
    if pa.types.is_large_binary(kind) or pa.types.is_large_string(kind):
        width = 8
    elif pa.types.is_binary(kind) or pa.types.is_string(kind):
        width = 4
    else:
        raise ValueError(f"cannot encode a pyarrow {kind} array as record bodies: "
                         f"use binary, string, large_binary or large_string")
    _validity, offsets, data = array.buffers()
    return (data if data is not None else b""), offsets, width, array.offset, array.offset + len(array)
