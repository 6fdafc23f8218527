"""Large records: bodies too big for a data file live in their own files (a body
above the write buffer that fits a data file is an ordinary record there,
written alone: Appender.append_alone).

Protocol (Artemis's large messages): the body is written under its final name
``large/<id>.body`` (a new random id, created exclusively) from an aligned
staging buffer with O_DIRECT, cut to its exact size and fdatasynced, and the
folder synced; only then is the small reference record (layout.LARGE_REF: id,
size, CRC-32C) appended to the journal, inside the caller's transaction. So a
durable reference always names a complete body. A crash before the reference
is durable leaves a body (possibly short or torn) that nothing durable names: an
orphan, which the next writer's load removes, and which no reader ever opens
(bodies are found only through references). A body dies with its record; it is
deleted when the data file holding the dead reference is reclaimed (or as an
orphan at the next load). ``.body.tmp`` files (older writers) are removed too.
"""
from __future__ import annotations

import mmap
import os
import secrets

from ..errors import CorruptJournalError
from ..format import layout
from ..format.codec import CODEC
from ..io.direct_write import STAGE_MAX, Stage, write_new_file
from ..io.files_io import fsync_dir
from ..io.modes import make_dirs
from .inside import check_inside

FOLDER = "large"
SUFFIX = ".body"


class LargeStore:
    def __init__(self, lane_dir: str, create: bool):
        self.directory = os.path.join(lane_dir, FOLDER)
        check_inside(lane_dir, FOLDER, "the large records folder")
        self._stage = Stage()
        if create:
            make_dirs(self.directory)

    def path(self, large_id: int) -> str:
        return os.path.join(self.directory, f"{large_id:016x}{SUFFIX}")

    def write(self, body) -> tuple[int, bytes]:
        """Stores ``body`` (a buffer, or an IpcBody serialized straight into the
        staging buffer) durably; returns (large id, the reference to append)."""
        size = len(body)
        while True:
            large_id = secrets.randbits(64) or 1
            try:
                if isinstance(body, IpcBody) and size <= STAGE_MAX:
                    crc = write_new_file(self.path(large_id), self._stage, size=size, fill=body.fill)
                else:
                    data = body.to_buffer() if isinstance(body, IpcBody) else body
                    crc = write_new_file(self.path(large_id), self._stage, data)
                break
            except FileExistsError:
                continue                     # an id taken by a body (or debris): draw again
        fsync_dir(self.directory)
        return large_id, layout.LARGE_REF.pack(large_id, size, crc, 0)

    def read(self, ref: bytes | memoryview, verify: bool = True) -> memoryview:
        """The body a reference names; CorruptJournalError if the reference is
        not one or its body is missing, of another size or (verify) another CRC:
        a durable reference always names a complete body (module doc)."""
        if len(ref) != layout.LARGE_REF.size:
            raise CorruptJournalError(self.directory, 0, f"a large record's reference is {len(ref)} "
                                      f"bytes, not {layout.LARGE_REF.size}")
        large_id, size, crc, _ = layout.LARGE_REF.unpack(bytes(ref))
        path = self.path(large_id)
        try:
            handle = open(path, "rb")
        except FileNotFoundError as error:
            raise CorruptJournalError(path, 0, f"the large body of {size} bytes a record refers "
                                      f"to is missing (removed by something other than "
                                      f"sparkjournal)") from error
        with handle:
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


class IpcBody:
    """An Arrow record batch as a record body (its IPC stream bytes), sized
    without copying so the body can be serialized straight into the staging
    buffer, once."""

    def __init__(self, batch):
        import pyarrow as pa
        self.batch = batch
        mock = pa.MockOutputStream()
        self._write(mock)
        self.size = mock.size()

    def __len__(self) -> int:
        return self.size

    def _write(self, sink) -> None:
        import pyarrow as pa
        with pa.ipc.new_stream(sink, self.batch.schema) as writer:
            writer.write_batch(self.batch)

    def fill(self, view: memoryview) -> None:
        import pyarrow as pa
        sink = pa.FixedSizeBufferWriter(pa.py_buffer(view))
        self._write(sink)
        if sink.tell() != self.size:
            raise AssertionError(f"IPC stream of {sink.tell()} bytes, sized as {self.size}")

    def to_buffer(self):
        import pyarrow as pa
        sink = pa.BufferOutputStream()
        self._write(sink)
        return sink.getvalue()
