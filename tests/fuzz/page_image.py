"""A PAGE record body and the page file it names as one fuzz input, and back.

An image is an options byte, the body's length (u16, little-endian), the
body, then the page file's bytes (whatever is left). ``write_page`` writes
the page file as ``<lane>/pages/<name>``, the name read from the body where
EVENTS.md puts it (bytes 80 .. 80+n, n at byte 6), when that name is one a
reader would look for (``page-[0-9a-z-]+.parquet``, at most 255 bytes); a body
whose name is none is refused before any file is opened.

Options, fix-ups a byte mutator almost never gets right by itself, so that
mutations reach the fields behind them:

* bit 0: the body's page file size (bytes 8..16) is set to the file's length
  (a reader refuses a page of another size before it opens it);
* bit 1: the CRC of every Parquet page (PageHeader field 4, a CRC-32 of the
  page's compressed bytes) is made right for its bytes, so the readers decode
  the page instead of refusing its checksum;
* bit 2: the page file is not written (a PAGE record whose file is missing);
* bit 3: the body's lowest and highest record id (bytes 32 and 40) are set to
  the first and last of its list.
"""
from __future__ import annotations

import os
import re
import struct
import zlib

FIX_SIZE, FIX_PAGE_CRCS, NO_FILE, FIX_ID_RANGE = 1, 2, 4, 8
HEAD = 80
NAME = re.compile(r"page-[0-9a-z-]+\.parquet")
_U16 = struct.Struct("<H")
_U64 = struct.Struct("<Q")


def split(data: bytes) -> tuple[int, bytearray, bytearray]:
    """(options, body, page file) of an image."""
    options = data[0] if data else 0
    length = _U16.unpack_from(data, 1)[0] if len(data) >= 3 else 0
    return options, bytearray(data[3:3 + length]), bytearray(data[3 + length:])


def join(options: int, body: bytes, page: bytes) -> bytes:
    if len(body) > 0xFFFF:
        raise ValueError(f"a body of {len(body)} bytes does not fit an image")
    return bytes([options]) + _U16.pack(len(body)) + bytes(body) + bytes(page)


def page_name(body: bytes) -> str | None:
    """The page file name the body states, when a reader could open it."""
    if len(body) < HEAD:
        return None
    n = _U16.unpack_from(body, 6)[0]
    try:
        name = bytes(body[HEAD:HEAD + n]).decode("utf-8")
    except UnicodeDecodeError:
        return None
    return name if NAME.fullmatch(name) and len(name) <= 255 else None


def write_page(data: bytes, lane: str) -> bytes:
    """Makes the lane folder of an image (``pages/`` and the page file) and
    returns the PAGE record body, fixed up as the options ask."""
    options, body, page = split(data)
    if options & FIX_PAGE_CRCS:
        fix_page_crcs(page)
    if options & FIX_SIZE and len(body) >= 16:
        _U64.pack_into(body, 8, len(page))
    if options & FIX_ID_RANGE and len(body) >= HEAD:
        n, m = _U16.unpack_from(body, 6)[0], struct.unpack_from("<I", body, 20)[0]
        if m and len(body) == HEAD + n + 8 * m:
            body[32:40] = body[HEAD + n:HEAD + n + 8]
            body[40:48] = body[len(body) - 8:]
    os.makedirs(os.path.join(lane, "pages"))
    name = page_name(body)
    if name is not None and not options & NO_FILE:
        with open(os.path.join(lane, "pages", name), "wb") as handle:
            handle.write(page)
    return bytes(body)


# --- Parquet page checksums (Thrift compact protocol) ---------------------

class _Bad(Exception):
    pass


def _varint(buf, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise _Bad()
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _zigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


def _skip(buf, pos: int, ftype: int, depth: int) -> int:
    """The position after a value of compact type ``ftype`` at pos."""
    if depth > 16:
        raise _Bad()
    if ftype in (1, 2):                         # bool in a field header
        return pos
    if ftype == 3:
        return pos + 1
    if ftype in (4, 5, 6):
        return _varint(buf, pos)[1]
    if ftype == 7:
        return pos + 8
    if ftype == 8:
        length, pos = _varint(buf, pos)
        return pos + length
    if ftype in (9, 10):
        if pos >= len(buf):
            raise _Bad()
        head = buf[pos]
        pos += 1
        size, etype = head >> 4, head & 0x0F
        if size == 15:
            size, pos = _varint(buf, pos)
        for _ in range(min(size, len(buf))):
            pos = pos + 1 if etype in (1, 2) else _skip(buf, pos, etype, depth + 1)
        return pos
    if ftype == 11:
        size, pos = _varint(buf, pos)
        if size:
            if pos >= len(buf):
                raise _Bad()
            kinds = buf[pos]
            pos += 1
            for _ in range(min(size, len(buf))):
                pos = _skip(buf, pos, kinds >> 4, depth + 1)
                pos = _skip(buf, pos, kinds & 0x0F, depth + 1)
        return pos
    if ftype == 12:
        return _struct(buf, pos, depth + 1, {})
    raise _Bad()


def _struct(buf, pos: int, depth: int, wanted: dict) -> int:
    """The position after a struct at pos; ``wanted`` gets {field id: (start,
    end)} of its top-level i32 fields."""
    field = 0
    while True:
        if pos >= len(buf):
            raise _Bad()
        head = buf[pos]
        pos += 1
        if head == 0:
            return pos
        delta, ftype = head >> 4, head & 0x0F
        if delta:
            field += delta
        else:
            raw, pos = _varint(buf, pos)
            field = _zigzag(raw)
        start = pos
        pos = _skip(buf, pos, ftype, depth)
        if ftype == 5:
            wanted[field] = (start, pos)


def fix_page_crcs(page: bytearray) -> None:
    """Walks the pages of a Parquet file from byte 4 to its footer and makes
    each page header's CRC (field 4) right for the page's compressed bytes,
    where the new value's varint is as long as the old one (nearly always);
    stops at the first header that does not parse."""
    end = len(page)
    if end >= 12 and page[-4:] == b"PAR1":
        footer = struct.unpack_from("<I", page, end - 8)[0]
        end = max(4, end - 8 - footer)
    pos = 4
    while pos < end:
        fields: dict = {}
        try:
            data_at = _struct(page, pos, 0, fields)
        except _Bad:
            return
        if 3 not in fields or 4 not in fields:
            return
        size = _zigzag(_varint(page, fields[3][0])[0])
        if size < 0 or data_at + size > len(page):
            return
        crc = zlib.crc32(bytes(page[data_at:data_at + size]))
        crc = crc - (1 << 32) if crc >= 1 << 31 else crc
        zz, encoded = (crc << 1) ^ (crc >> 31), bytearray()
        zz &= 0xFFFFFFFF
        while True:
            encoded.append((zz & 0x7F) | (0x80 if zz > 0x7F else 0))
            zz >>= 7
            if not zz:
                break
        start, stop = fields[4]
        if stop - start == len(encoded):
            page[start:stop] = encoded
        pos = data_at + size


def golden_seeds(lane: str) -> list[bytes]:
    """One image per live PAGE record of a golden lane (its body and the page
    file it names, if there), as is and with every fix-up asked. The lane is
    read from a copy: a snapshot takes the lane's file-set lock, which
    creates files.lock, and the golden corpus is never written to."""
    import shutil
    import tempfile
    from sparkjournal.journal.journal import Journal
    seeds = []
    with tempfile.TemporaryDirectory(prefix="sj-fuzz-golden-") as base:
        copy = shutil.copytree(lane, os.path.join(base, "lane"))
        with Journal.read(copy) as snapshot:
            for record in snapshot.records():
                if record.user_type != 3:
                    continue
                body = bytes(record.body)
                name = page_name(body)
                path = os.path.join(copy, "pages", name) if name else None
                page = b""
                if path and os.path.isfile(path):
                    with open(path, "rb") as handle:
                        page = handle.read()
                seeds += [join(0, body, page),
                          join(FIX_SIZE | FIX_PAGE_CRCS | FIX_ID_RANGE, body, page)]
    return seeds
