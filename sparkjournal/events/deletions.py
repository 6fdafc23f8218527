"""Deleted events: whole records, and rows of records (deletion vectors).

Events are stored as records of Arrow batches (event_records.py); a row is
known by (record id, row position). A position is always the row's place in
the batch as it was first written, its *original* position: when compaction
physically drops deleted rows from a record it keeps the survivors' original
positions in a hidden column ``__sj_row`` (uint32), so a deletion written
before or after that still names the same rows.

A deletion vector is a journal record of user type DELETION_VECTOR (an ADD;
its own record id is fresh) whose body is, little-endian:

| offset | size | field |
|---|---|---|
| 0 | 4 | magic ``SJDV`` |
| 4 | 1 | version, 1 |
| 5 | 1 | flags: bit 0 ALL (every row of the target; no positions follow) |
| 6 | 2 | reserved, 0 |
| 8 | 8 | target record id (u64) |
| 16 | 4 | n, the number of positions (u32) |
| 20 | 4n | original positions (u32), ascending, no repeats |

Several vectors may name one target; its deleted rows are their union. A
vector for a target that is no longer live (deleted whole, paged) still applies
wherever that record's rows are read (pages carry record ids and positions).
Nothing here is pickled or evaluated.
"""
from __future__ import annotations

import struct

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import FormatVersionError, SparkJournalError
from ..format.constants import HIDDEN_COLUMNS, MAGICS, METADATA_COLUMNS, USER_TYPES, magic

DELETION_VECTOR = USER_TYPES.DELETION_VECTOR   # the user type of deletion vector records
ROW_COLUMN = HIDDEN_COLUMNS.ROW_COLUMN          # original positions, where rows were dropped
MAGIC = magic(MAGICS.DELETION_VECTOR)
VERSION = 1
FLAG_ALL = 0x01
HEAD = struct.Struct("<4sBBHQI")


class DeletionVectorError(SparkJournalError, ValueError):
    """A deletion vector body that does not decode (damage: the record's CRC
    held, so it was written this way, or by a newer sparkjournal)."""


def encode_vector(target: int, positions) -> bytes:
    """A deletion vector body; ``positions`` None means every row."""
    if positions is None:
        return HEAD.pack(MAGIC, VERSION, FLAG_ALL, 0, target, 0)
    ordered = sorted(set(int(p) for p in positions))
    return HEAD.pack(MAGIC, VERSION, 0, 0, target, len(ordered)) + struct.pack(f"<{len(ordered)}I", *ordered)


def decode_vector(body, where: str = "a deletion vector") -> tuple[int, pa.Array | None]:
    """(target record id, its deleted original positions, or None for all).
    A vector of a newer version (``where`` names it) is refused, never guessed at."""
    raw = memoryview(body).cast("B")
    if raw.nbytes < HEAD.size:
        raise DeletionVectorError(f"a deletion vector of {raw.nbytes} bytes is shorter than its header")
    magic, version, flags, _reserved, target, count = HEAD.unpack_from(raw)
    if magic == MAGIC and version > VERSION:
        raise FormatVersionError(where, version, VERSION, "deletion vector")
    if magic != MAGIC or version != VERSION:
        raise DeletionVectorError(f"not a version 1 deletion vector (magic {magic!r}, version {version})")
    if flags & FLAG_ALL:
        return target, None
    if raw.nbytes != HEAD.size + 4 * count:
        raise DeletionVectorError(f"deletion vector for record {target} says {count} positions "
                                  f"but holds {(raw.nbytes - HEAD.size) // 4}")
    positions = pa.Array.from_buffers(pa.uint32(), count,
                                      [None, pa.py_buffer(bytes(raw[HEAD.size:]))])
    return target, positions


class Deletions:
    """The deleted rows of a lane, by record id; merges vectors and requests."""

    def __init__(self) -> None:
        self._rows: dict[int, set | None] = {}

    def __bool__(self) -> bool:
        return bool(self._rows)

    def __contains__(self, record_id: int) -> bool:
        return record_id in self._rows

    def add(self, record_id: int, positions) -> None:
        """Deletes ``positions`` (original positions; None: every row) of a record."""
        if positions is None:
            self._rows[record_id] = None
            return
        current = self._rows.get(record_id, set())
        if current is not None:
            current.update(int(p) for p in (positions.to_pylist() if isinstance(positions, pa.Array)
                                            else positions))
            self._rows[record_id] = current

    def merge(self, other: "Deletions") -> None:
        for record_id, rows in other._rows.items():
            self.add(record_id, rows)

    def add_vector(self, body, where: str = "a deletion vector") -> None:
        target, positions = decode_vector(body, where)
        self.add(target, positions)

    def rows_of(self, record_id: int) -> set | None:
        """The deleted positions of a record (None: all of them); empty if none."""
        return self._rows.get(record_id, set())

    def whole(self, record_id: int) -> bool:
        return record_id in self._rows and self._rows[record_id] is None

    def apply(self, batch: pa.RecordBatch, record_id: int) -> pa.RecordBatch | None:
        """``batch`` (one stored record's rows) without its deleted rows, their
        original positions in ``__sj_row``; None when none is left. Untouched,
        zero-copy, when nothing of it is deleted."""
        if record_id not in self._rows:
            return batch
        deleted = self._rows[record_id]
        if deleted is None:
            return None
        kept = without_rows(batch, deleted)
        return kept if kept.num_rows else None

    def filter_rows(self, table: pa.Table, ids: str = METADATA_COLUMNS.RECORD_ID,
                    rows: str = METADATA_COLUMNS.ROW):
        """``table`` (rows of many records: a page, page_scan.py) without the
        deleted ones, known by the columns ``ids`` and ``rows``; untouched when
        none of its records has deletions."""
        if not self._rows or not table.num_rows:
            return table
        record_ids = table.column(ids).cast(pa.int64())
        whole = [rid for rid, deleted in self._rows.items() if deleted is None]
        drop = pc.is_in(record_ids, value_set=pa.array(whole, pa.int64()))
        partly = pc.is_in(record_ids, value_set=pa.array(
            [rid for rid, deleted in self._rows.items() if deleted], pa.int64()))
        if pc.any(partly).as_py():
            positions = table.column(rows)
            for rid in set(pc.filter(record_ids, partly).to_pylist()):
                hit = pc.and_(pc.equal(record_ids, rid), pc.is_in(
                    positions, value_set=pa.array(sorted(self._rows[rid]), positions.type)))
                drop = pc.or_(drop, hit)
        return table.filter(pc.invert(drop))


def original_positions(batch: pa.RecordBatch, type_: pa.DataType = pa.uint32()) -> pa.Array:
    """Each row's original position in its record, as ``type_``."""
    index = batch.schema.get_field_index(ROW_COLUMN)
    if index >= 0:
        column = batch.column(index)
        return column if column.type == type_ else column.cast(type_)
    return _sequence(batch.num_rows, type_)


_SEQUENCES: dict = {}           # type -> 0, 1, 2, ... (grown on demand, sliced: no copy)


def _sequence(length: int, type_: pa.DataType) -> pa.Array:
    """0 .. length-1 as ``type_``; building it from a Python range per batch cost
    ~1 ms per 2,000 rows, more than the rest of a lane scan."""
    found = _SEQUENCES.get(type_)
    if found is None or len(found) < length:
        found = _SEQUENCES[type_] = pa.array(range(max(length, 1 << 16)), type_)
    return found.slice(0, length)


def without_rows(batch: pa.RecordBatch, deleted: set) -> pa.RecordBatch:
    """The batch with ``deleted`` original positions physically dropped and the
    survivors' original positions kept in ``__sj_row`` (compaction)."""
    positions = original_positions(batch)
    keep = pc.invert(pc.is_in(positions, value_set=pa.array(sorted(deleted), pa.uint32())))
    kept = batch.filter(keep)
    kept_positions = positions.filter(keep)
    index = kept.schema.get_field_index(ROW_COLUMN)
    if index >= 0:
        return kept.set_column(index, ROW_COLUMN, kept_positions)
    return kept.append_column(pa.field(ROW_COLUMN, pa.uint32(), nullable=False), kept_positions)
