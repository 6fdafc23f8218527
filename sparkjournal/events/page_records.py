"""PAGE records: which page files hold a lane's paged events.

Paging (maintenance/paging.py) moves a lane's oldest visible events into a
Parquet *page file* ``<lane>/pages/<name>.parquet`` (page_scan.py reads them)
and makes it visible with ONE committed journal transaction: a PAGE record
(user type PAGE, an ADD) naming the file, and a DELETE for every record moved.
So a load sees either the records or the page, never both and never neither.
A page file no live PAGE record names is never read: it is an orphan (a
paging killed before its transaction committed, an abandoned page, or a page
dropped once all its events were deleted, maintenance/page_drop.py) that the
next paging run removes.

A PAGE record's body, little-endian (the layout FORMAT.md lists):

| offset | size | field |
|---|---|---|
| 0 | 4 | magic ``SJPG`` |
| 4 | 1 | version, 1 |
| 5 | 1 | flags, 0 |
| 6 | 2 | n, the length of the file name (u16) |
| 8 | 8 | the page file's size in bytes (u64) |
| 16 | 4 | CRC-32C of the whole page file (u32) |
| 20 | 4 | m, the number of records moved (u32) |
| 24 | 8 | rows in the page (u64) |
| 32 | 8 | lowest record id moved (u64) |
| 40 | 8 | highest record id moved (u64) |
| 48 | 8 | lowest ``_batch_id`` (i64; -1 when unknown) |
| 56 | 8 | highest ``_batch_id`` (i64; -1 when unknown) |
| 64 | 8 | earliest ``_commit_time``, us since the epoch (i64; -1 when unknown) |
| 72 | 8 | latest ``_commit_time`` (i64; -1 when unknown) |
| 80 | n | file name, UTF-8, a plain name inside ``pages/`` (no ``/``) |
| 80+n | 8m | the record ids moved (u64), ascending |

The journal's record CRC covers the body. Nothing is pickled or evaluated.
"""
from __future__ import annotations

import dataclasses
import os
import re
import struct

from ..errors import FormatVersionError
from ..format.constants import MAGICS, PATHS, REQUESTED_PAGE as FIELDS, USER_TYPES, magic
from .node import read_node_id
from .requests import RequestError

PAGE = USER_TYPES.PAGE                 # the user type of PAGE records
PAGES = PATHS.PAGES                    # the lane's folder of page files
MAGIC = magic(MAGICS.PAGE)
HEAD = struct.Struct("<4sBBHQIIQQQqqqq")
VERSION = 1
U32, U64 = (1 << 32) - 1, (1 << 64) - 1
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1
NAME = re.compile(r"page-[0-9a-z-]+\.parquet")


class PageRecordError(ValueError):
    """A PAGE record body, or a page request, that does not decode."""


@dataclasses.dataclass(frozen=True)
class PageRef:
    """One page file and what it holds."""
    name: str
    size: int
    crc32c: int
    rows: int
    record_ids: tuple
    batch_range: tuple = (-1, -1)      # (lowest, highest) _batch_id; -1: unknown
    time_range: tuple = (-1, -1)       # (earliest, latest) _commit_time in us; -1: unknown

    def __post_init__(self):
        if not NAME.fullmatch(self.name):
            raise PageRecordError(f"page file name {self.name!r} is not of the form "
                                  f"page-<id>.parquet")
        if not self.record_ids or list(self.record_ids) != sorted(set(self.record_ids)):
            raise PageRecordError(f"page {self.name}: record ids must be ascending, "
                                  f"without repeats, and not empty")

    @property
    def first_id(self) -> int:
        return self.record_ids[0]

    @property
    def last_id(self) -> int:
        return self.record_ids[-1]

    def path(self, lane: str) -> str:
        return os.path.join(lane, PAGES, self.name)

    def encode(self) -> bytes:
        name = self.name.encode()
        head = HEAD.pack(MAGIC, 1, 0, len(name), self.size, self.crc32c, len(self.record_ids),
                         self.rows, self.first_id, self.last_id, *self.batch_range,
                         *self.time_range)
        return head + name + struct.pack(f"<{len(self.record_ids)}Q", *self.record_ids)

    def as_request(self) -> dict:
        """The page as JSON-able fields (a page request's payload)."""
        return {FIELDS.NAME: self.name, FIELDS.SIZE: self.size, FIELDS.CRC32C: self.crc32c,
                FIELDS.ROWS: self.rows, FIELDS.RECORD_IDS: list(self.record_ids),
                FIELDS.BATCH_RANGE: list(self.batch_range),
                FIELDS.TIME_RANGE: list(self.time_range)}

    @classmethod
    def from_request(cls, fields: dict, where: str = "a page request") -> "PageRef":
        """The page a ``page`` request's ``page`` object names, every field of
        the type and range EVENTS.md's "Lane requests" gives (so the PAGE
        record encodes: never a struct.error later). Raises RequestError
        (*damaged*) naming ``where`` otherwise; nothing is written."""
        try:
            if type(fields) is not dict or type(fields.get(FIELDS.NAME)) is not str:
                raise TypeError(f"the page is not an object with a string \"{FIELDS.NAME}\"")
            return cls(fields[FIELDS.NAME], _int(fields[FIELDS.SIZE], 0, U64),
                       _int(fields[FIELDS.CRC32C], 0, U32), _int(fields[FIELDS.ROWS], 0, U64),
                       tuple(_int(i, 0, U64) for i in _list(fields[FIELDS.RECORD_IDS])),
                       _pair(fields[FIELDS.BATCH_RANGE]), _pair(fields[FIELDS.TIME_RANGE]))
        except (KeyError, TypeError, ValueError) as error:
            raise RequestError(f"{where} lacks or mistypes a field ({error}); remove it and "
                               f"run paging again") from error


def _int(value, lo: int, hi: int) -> int:
    if type(value) is not int:
        raise TypeError(f"{value!r} is not a whole number")
    if not lo <= value <= hi:
        raise ValueError(f"{value} is not in {lo}..{hi}")
    return value


def _list(value) -> list:
    if type(value) is not list:
        raise TypeError(f"{value!r} is not a list")
    return value


def _pair(value) -> tuple:
    """A batch or time range: a list of exactly two i64 integers."""
    if len(_list(value)) != 2:
        raise ValueError(f"{value!r} is not a list of two integers")
    return tuple(_int(v, I64_MIN, I64_MAX) for v in value)


def decode(body, where: str = "a PAGE record") -> PageRef:
    """The page a PAGE record body names. Raises FormatVersionError
    (*newer-format*, naming ``where``) for magic ``SJPG`` with a version
    above 1, checked before the rest; PageRecordError (*damaged*) for any
    other body EVENTS.md does not accept (a name that is not UTF-8 included)."""
    raw = bytes(memoryview(body).cast("B"))
    if len(raw) >= 5 and raw[:4] == MAGIC and raw[4] > VERSION:
        raise FormatVersionError(where, raw[4], VERSION, "PAGE record")
    if len(raw) < HEAD.size:
        raise PageRecordError(f"a PAGE record of {len(raw)} bytes is shorter than its header")
    (magic, version, _flags, name_len, size, crc, count, rows, first, last,
     batch_low, batch_high, time_low, time_high) = HEAD.unpack_from(raw)
    if magic != MAGIC or version != VERSION:
        raise PageRecordError(f"not a version 1 PAGE record (magic {magic!r}, version {version})")
    if len(raw) != HEAD.size + name_len + 8 * count:
        raise PageRecordError(f"a PAGE record of {len(raw)} bytes does not hold the name of "
                              f"{name_len} bytes and {count} record ids it announces")
    try:
        name = raw[HEAD.size:HEAD.size + name_len].decode("utf-8")
    except UnicodeDecodeError:
        raise PageRecordError(f"a PAGE record's page file name "
                              f"{raw[HEAD.size:HEAD.size + name_len][:80]!r} is not UTF-8") from None
    ids = struct.unpack_from(f"<{count}Q", raw, HEAD.size + name_len)
    ref = PageRef(name, size, crc, rows, tuple(ids), (batch_low, batch_high), (time_low, time_high))
    if (ref.first_id, ref.last_id) != (first, last):
        raise PageRecordError(f"PAGE record of {name}: its record id range {first}..{last} "
                              f"disagrees with its record ids")
    return ref


def holds_events(lane: str) -> bool:
    """Whether the lane's user type 3 records are PAGE records: a lane of
    events (its node root carries a NODE_ID, node.py) or one with a pages
    folder. In any other journal the user types are the application's own
    (``sparkjournal verify`` and ``inspect`` read plain journals too)."""
    return (os.path.isdir(os.path.join(lane, PAGES)) or
            read_node_id(os.path.dirname(os.path.abspath(lane))) is not None)


def live_pages(snapshot) -> list[PageRef]:
    """The pages a lane snapshot makes visible, oldest records first."""
    return [ref for _record_id, ref in live_page_records(snapshot)]


def live_page_records(snapshot) -> list[tuple[int, PageRef]]:
    """(PAGE record id, page) of the snapshot's live PAGE records, oldest
    paged records first (dropping a page deletes its PAGE record by id)."""
    pages = [(record.record_id, decode(record.body)) for record in snapshot.records()
             if record.user_type == PAGE]
    return sorted(pages, key=lambda found: found[1].first_id)


def paged_record_ids(snapshot) -> set:
    """Ids of the records whose rows live in the snapshot's pages (lane_deletes'
    rows_elsewhere: deletes of them become deletion vectors)."""
    return {record_id for ref in live_pages(snapshot) for record_id in ref.record_ids}
