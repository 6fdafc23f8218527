"""Writing from page-aligned memory: the appender's write buffers, and new files
written once (large-record bodies) through a reused staging buffer.

Why: O_DIRECT writes skip the page cache, so a big write neither touches fresh
page-cache pages (2-6 us each on this machine) nor waits for write-back at the
sync; and a buffer reused across writes is touched once (disk-limits.md).

``write_new_file`` contract: ``path`` must not exist (FileExistsError otherwise,
nothing changed). The file is created under its final name, written from the
stage chunk by chunk (whole blocks with O_DIRECT where the file system takes it,
a last partial block buffered) and fdatasynced; the CRC-32C of the body is
returned. Blocks are allocated up front (posix_fallocate). It does not sync the
folder: the caller does that before it relies on the name.
Crash behaviour: until that folder sync and the caller's own durable reference,
a crash may leave the file missing, short or torn, so callers must treat a file
nothing durable refers to as garbage. On any failure the file is removed.
"""
from __future__ import annotations

import errno as errno_codes
import fcntl
import mmap
import os
import threading
from typing import Callable

from ..format.codec import CODEC
from .files_io import aligned_buffer, close_quietly, remove_quietly, write_all
from .io_rate import PIECE, UNCAPPED, IoRate
from .modes import create_file
from .sequential_file import io_error

BLOCK = 4096                   # O_DIRECT alignment that every device here accepts
STAGE_MAX = 64 << 20           # a body up to this is staged whole; larger ones in chunks
CHUNK = 8 << 20


class Stage:
    """One reused aligned buffer; grows (in MiB steps) to the largest need seen.
    Its memory is not zeroed between uses: callers write every byte they write
    out. ``release`` hands the buffer to the process's pool of staging buffers
    (the next Stage that needs one takes it: a lane writer opened again in a
    reused Spark worker then skips allocating and faulting in its stage, ~1.4 ms
    for the 3 MiB of a 10k-event batch here); the Stage stays usable."""

    def __init__(self) -> None:
        self._buf: mmap.mmap | None = None

    def view(self, size: int) -> memoryview:
        padded = -(-max(size, 1) // BLOCK) * BLOCK
        if self._buf is None or len(self._buf) < padded:
            if self._buf is not None:
                _pool.give(self._buf)
            self._buf = _pool.take(padded) or aligned_buffer(-(-padded // (1 << 20)) * (1 << 20))
        return memoryview(self._buf)[:padded]

    def release(self) -> None:
        """Returns the buffer to the pool; no view of it may be in use."""
        buf, self._buf = self._buf, None
        if buf is not None:
            _pool.give(buf)


class _StagePool:
    """Released staging buffers of this process, at most POOL_BYTES in all
    (a buffer that would pass that is unmapped instead)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: list[mmap.mmap] = []

    def take(self, size: int) -> mmap.mmap | None:
        """The smallest pooled buffer of at least ``size`` bytes, if any."""
        with self._lock:
            fitting = [buf for buf in self._free if len(buf) >= size]
            if not fitting:
                return None
            chosen = min(fitting, key=len)
            self._free.remove(chosen)
            return chosen

    def give(self, buf: mmap.mmap) -> None:
        with self._lock:
            if sum(map(len, self._free)) + len(buf) <= POOL_BYTES:
                self._free.append(buf)
                return
        close_quietly(buf)


POOL_BYTES = 64 << 20
_pool = _StagePool()


def write_new_file(path: str, stage: Stage, body=None, size: int | None = None,
                   fill: Callable[[memoryview], None] | None = None,
                   rate: IoRate = UNCAPPED) -> int:
    """Writes ``body`` (any buffer), or ``size`` bytes that ``fill(view)`` puts
    into a staging view (only when size <= STAGE_MAX), as the new file ``path``;
    under a capped ``rate`` in pieces paced by it (io_rate.py)."""
    total = memoryview(body).nbytes if body is not None else size
    fd = _create(path)
    try:
        _allocate(fd, total)
        if fill is not None:
            view = stage.view(total)
            fill(view[:total])
            crc = _write_paced(fd, view, total, 0, 0, rate)
        else:
            data, crc = memoryview(body).cast("B"), 0
            step = total if total <= STAGE_MAX else CHUNK
            for start in range(0, total, step):
                part = data[start:start + step]
                view = stage.view(part.nbytes)
                view[:part.nbytes] = part
                crc = _write_paced(fd, view, part.nbytes, start, crc, rate)
        os.fdatasync(fd)
    except BaseException as error:
        os.close(fd)
        remove_quietly(path)
        if isinstance(error, OSError):
            raise io_error(error.errno or errno_codes.EIO, "writing", path) from error
        raise
    os.close(fd)
    return crc


def _create(path: str) -> int:
    flags = os.O_WRONLY | os.O_EXCL
    try:
        return create_file(path, flags | getattr(os, "O_DIRECT", 0))
    except OSError as error:
        if error.errno != errno_codes.EINVAL:          # EINVAL: no O_DIRECT here
            raise
    return create_file(path, flags)


def _allocate(fd: int, size: int) -> None:
    """Sets the size and allocates the blocks in one step (fewer metadata updates
    than block allocation write by write); skipped where unsupported."""
    if size:
        try:
            os.posix_fallocate(fd, 0, size)
        except OSError as error:
            if error.errno not in (errno_codes.EOPNOTSUPP, errno_codes.EINVAL):
                raise


def _write_paced(fd: int, view: memoryview, length: int, offset: int, crc: int, rate: IoRate) -> int:
    """_write_staged in pieces of io_rate.PIECE, each taken from ``rate`` (one
    piece, the whole length, when uncapped)."""
    step = PIECE if rate.capped else max(length, 1)
    for start in range(0, length, step):
        piece = min(step, length - start)
        rate.take(piece)
        crc = _write_staged(fd, view[start:start + piece], piece, offset + start, crc)
    return crc


def _write_staged(fd: int, view: memoryview, length: int, offset: int, crc: int) -> int:
    """Writes view[:length] at offset: whole blocks with O_DIRECT, then a last
    partial block (only the body's end has one) buffered, O_DIRECT switched off,
    so no padding needs cutting off. Returns the CRC continued over the bytes."""
    crc = CODEC.crc32c(view[:length], crc)
    whole = length // BLOCK * BLOCK
    write_all(fd, view[:whole], offset)
    if whole < length:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~getattr(os, "O_DIRECT", 0))
        write_all(fd, view[whole:length], offset + whole)
    return crc
