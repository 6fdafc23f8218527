"""One data file: its header, and a scan of its records.

The header is written only in two moments: when the file is created (inside the
zero-filled ``.tmp`` before the rename) and when the file is freed or reused
(rewritten in place with a new id, then synced). A crash during a rewrite leaves
either the old or the new header (or a torn one, which sends the file to the
attic): never a file whose stale records look current.
"""
from __future__ import annotations

import dataclasses
import mmap
import os
import time

from ..errors import FormatVersionError
from ..format import layout
from ..format.codec import CODEC

DATA_PREFIX = "data-"
DATA_SUFFIX = ".sjd"
COMPACTING_SUFFIX = ".cmp"    # a compacted file before its swap (swap.py)


@dataclasses.dataclass(frozen=True)
class FileHeader:
    file_id: int
    file_size: int
    block_size: int
    sync_window: int
    user_version: int = 0
    created_ns: int = 0
    format_version: int = layout.FORMAT_VERSION
    prev_file_id: int = 0     # the file sealed before the first write here
    prev_end: int = 0         # where that file's data ends
    sealed_end: int = 0       # a file written whole (compaction): its exact end of data
    max_record_id: int = 0    # the id watermark: highest ids handed out before this
    max_tx_id: int = 0        # file's first record (a lane never hands them out again)

    def encode(self) -> bytes:
        """Always the current format version's header."""
        fixed = layout.FILE_HEADER.pack(
            layout.FILE_MAGIC, layout.FORMAT_VERSION, self.user_version, self.file_id,
            self.file_size, self.block_size, self.sealed_end // layout.RECORD_ALIGN, self.sync_window,
            self.created_ns or time.time_ns(), self.prev_file_id, self.prev_end,
            self.max_record_id, self.max_tx_id)
        crc = CODEC.crc32c(fixed).to_bytes(4, "little")
        return (fixed + crc).ljust(layout.FILE_HEADER_SIZE, b"\0")


class BadHeader(Exception):
    """The header cannot be trusted: the file goes to the attic."""


class WrongSize(BadHeader):
    """A valid header, but the file is not the size it says: cut short or grown
    after it was written (nothing sparkjournal does changes a data file's size)."""

    def __init__(self, header: "FileHeader", actual: int):
        self.header, self.actual = header, actual
        super().__init__(f"file is {actual} bytes, its header says {header.file_size}")


def decode_header(raw: bytes, path: str) -> FileHeader:
    """Parses a header block; BadHeader if it is not one, FormatVersionError if a
    newer sparkjournal wrote it."""
    if len(raw) < layout.FILE_HEADER_V1_CRC_AT + 4:
        raise BadHeader(f"{len(raw)} bytes, shorter than a header")
    magic, version = raw[:8], int.from_bytes(raw[8:12], "little")
    if magic != layout.FILE_MAGIC:
        raise BadHeader(f"magic {magic!r} is not {layout.FILE_MAGIC!r}")
    struct_, crc_at = ((layout.FILE_HEADER_V1, layout.FILE_HEADER_V1_CRC_AT) if version == 1
                       else (layout.FILE_HEADER, layout.FILE_HEADER_CRC_AT))
    if len(raw) < crc_at + 4:
        raise BadHeader(f"{len(raw)} bytes, shorter than a version {version} header")
    stored_crc = int.from_bytes(raw[crc_at:crc_at + 4], "little")
    if CODEC.crc32c(raw[:crc_at]) != stored_crc:
        raise BadHeader("header checksum mismatch")
    if version > layout.FORMAT_VERSION:
        raise FormatVersionError(path, version, layout.FORMAT_VERSION, "data file")
    fields = struct_.unpack_from(raw)
    if version == 1:
        fields += (0, 0)                    # no id watermark before version 2
    (_magic, _version, user_version, file_id, file_size, block_size, sealed, window, created,
     prev_file_id, prev_end, max_record_id, max_tx_id) = fields
    if version < 1 or file_size % layout.FILE_SIZE_MULTIPLE or block_size not in (512, 1024, 2048, 4096):
        raise BadHeader(f"implausible header (version {version}, size {file_size}, block {block_size})")
    sealed_end = sealed * layout.RECORD_ALIGN
    if sealed_end > file_size:
        raise BadHeader(f"sealed end {sealed_end} lies past the file size {file_size}")
    return FileHeader(file_id, file_size, block_size, window, user_version, created, version,
                      prev_file_id, prev_end, sealed_end, max_record_id, max_tx_id)


def read_header(path: str) -> FileHeader:
    with open(path, "rb") as handle:
        raw = handle.read(layout.FILE_HEADER_SIZE)
    header = decode_header(raw, path)
    actual = os.path.getsize(path)
    if actual != header.file_size:
        raise WrongSize(header, actual)
    return header


def is_data_file_name(name: str) -> bool:
    return name.startswith(DATA_PREFIX) and name.endswith(DATA_SUFFIX)


def is_data_file_debris(name: str) -> bool:
    """A data file its writer never finished creating (``data-N.sjd.tmp``)."""
    return name.endswith(".tmp") and is_data_file_name(name[:-len(".tmp")])


def data_file_name(number: int) -> str:
    return f"{DATA_PREFIX}{number:010d}{DATA_SUFFIX}"


def file_number(name: str) -> int:
    """The number in a data file's name (also while it waits for its swap as ``.cmp``)."""
    name = name.removesuffix(COMPACTING_SUFFIX)
    return int(name[len(DATA_PREFIX):-len(DATA_SUFFIX)])


class MappedFile:
    """A read-only memory map of a data file; bodies are zero-copy slices of it."""

    def __init__(self, path: str):
        self.path = path
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            self.map = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ) if size else None
        self.view = memoryview(self.map) if self.map is not None else memoryview(b"")

    def scan(self, file_id: int, verify_crc: bool):
        return CODEC.scan(self.view, layout.FILE_HEADER_SIZE, layout.file_id32(file_id), verify_crc)

    def close(self) -> None:
        try:
            self.view.release()
            if self.map is not None:
                self.map.close()
        except BufferError:
            # Record views handed out are still alive: the map closes when they go.
            pass
