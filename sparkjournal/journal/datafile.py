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

    def encode(self) -> bytes:
        fixed = layout.FILE_HEADER.pack(
            layout.FILE_MAGIC, self.format_version, self.user_version, self.file_id,
            self.file_size, self.block_size, 0, self.sync_window,
            self.created_ns or time.time_ns(), self.prev_file_id, self.prev_end)
        crc = CODEC.crc32c(fixed).to_bytes(4, "little")
        return (fixed + crc).ljust(layout.FILE_HEADER_SIZE, b"\0")


class BadHeader(Exception):
    """The header cannot be trusted: the file goes to the attic."""


def decode_header(raw: bytes, path: str) -> FileHeader:
    """Parses a header block; BadHeader if it is not one, FormatVersionError if a
    newer sparkjournal wrote it."""
    need = layout.FILE_HEADER_CRC_AT + 4
    if len(raw) < need:
        raise BadHeader(f"{len(raw)} bytes, shorter than a header")
    fields = layout.FILE_HEADER.unpack_from(raw)
    (magic, version, user_version, file_id, file_size, block_size, _, window, created,
     prev_file_id, prev_end) = fields
    if magic != layout.FILE_MAGIC:
        raise BadHeader(f"magic {magic!r} is not {layout.FILE_MAGIC!r}")
    stored_crc = int.from_bytes(raw[layout.FILE_HEADER_CRC_AT:need], "little")
    if CODEC.crc32c(raw[:layout.FILE_HEADER_CRC_AT]) != stored_crc:
        raise BadHeader("header checksum mismatch")
    if version > layout.FORMAT_VERSION:
        raise FormatVersionError(path, version, layout.FORMAT_VERSION)
    if version < 1 or file_size % layout.FILE_SIZE_MULTIPLE or block_size not in (512, 1024, 2048, 4096):
        raise BadHeader(f"implausible header (version {version}, size {file_size}, block {block_size})")
    return FileHeader(file_id, file_size, block_size, window, user_version, created, version,
                      prev_file_id, prev_end)


def read_header(path: str) -> FileHeader:
    with open(path, "rb") as handle:
        raw = handle.read(layout.FILE_HEADER_SIZE)
    header = decode_header(raw, path)
    actual = os.path.getsize(path)
    if actual != header.file_size:
        raise BadHeader(f"file is {actual} bytes, its header says {header.file_size}")
    return header


def is_data_file_name(name: str) -> bool:
    return name.startswith(DATA_PREFIX) and name.endswith(DATA_SUFFIX)


def data_file_name(number: int) -> str:
    return f"{DATA_PREFIX}{number:010d}{DATA_SUFFIX}"


def file_number(name: str) -> int:
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
