"""Large records: bodies too big for the write buffer live in their own files.

Protocol (Artemis's large messages): the body is written to
``large/<id>.body.tmp``, synced, renamed, and the folder synced; only then is the
small reference record (layout.LARGE_REF: id, size, CRC-32C) appended to the
journal, inside the caller's transaction. So a durable reference always names a
complete body, and a crash between the steps leaves an orphan that the next
writer's load removes. A body dies with its record; it is deleted when the data
file holding the dead reference is reclaimed (or as an orphan at the next load).
"""
from __future__ import annotations

import mmap
import os
import secrets

from ..errors import CorruptJournalError
from ..format import layout
from ..format.codec import CODEC
from ..io.files_io import fsync_dir, write_file_atomically

FOLDER = "large"
SUFFIX = ".body"


class LargeStore:
    def __init__(self, lane_dir: str, create: bool):
        self.directory = os.path.join(lane_dir, FOLDER)
        if create:
            os.makedirs(self.directory, exist_ok=True)

    def path(self, large_id: int) -> str:
        return os.path.join(self.directory, f"{large_id:016x}{SUFFIX}")

    def write(self, body) -> tuple[int, bytes]:
        """Stores ``body`` durably; returns (large id, the reference to append)."""
        large_id = secrets.randbits(64) or 1
        write_file_atomically(self.path(large_id), body)
        ref = layout.LARGE_REF.pack(large_id, len(body), CODEC.crc32c(body), 0)
        return large_id, ref

    def read(self, ref: bytes | memoryview, verify: bool = True) -> memoryview:
        large_id, size, crc, _ = layout.LARGE_REF.unpack(bytes(ref))
        path = self.path(large_id)
        with open(path, "rb") as handle:
            actual = os.fstat(handle.fileno()).st_size
            if actual != size:
                raise CorruptJournalError(path, 0, f"large body is {actual} bytes, its record says {size}")
            view = memoryview(mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_READ)) if size \
                else memoryview(b"")
        if verify and CODEC.crc32c(view) != crc:
            raise CorruptJournalError(path, 0, "large body checksum mismatch")
        return view

    def delete(self, large_ids) -> None:
        removed = False
        for large_id in large_ids:
            try:
                os.unlink(self.path(large_id))
                removed = True
            except FileNotFoundError:
                pass
        if removed:
            fsync_dir(self.directory)

    def remove_orphans(self, referenced: set) -> int:
        """Deletes bodies no live or prepared record references, and unfinished
        ``.tmp`` bodies. Only a lane's writer may call this."""
        if not os.path.isdir(self.directory):
            return 0
        orphans = []
        for name in os.listdir(self.directory):
            if name.endswith(".tmp"):
                os.unlink(os.path.join(self.directory, name))
                continue
            if name.endswith(SUFFIX):
                try:
                    large_id = int(name[:-len(SUFFIX)], 16)
                except ValueError:
                    continue
                if large_id not in referenced:
                    orphans.append(large_id)
        self.delete(orphans)
        return len(orphans)
