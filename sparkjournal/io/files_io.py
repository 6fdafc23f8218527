"""Whole-file operations the journal needs: pre-creating zero-filled data
files, writing small files atomically, and syncing directories.

Crash behaviour: each function writes under ``<path>.tmp``, syncs it, renames
it over ``path`` and syncs the directory, so after a crash ``path`` is either
absent (or its old version) or complete; a leftover ``*.tmp`` is garbage that
the loader deletes. On this ext4 (no jbd2 journal) only that order makes the
rename safe: without the file sync the renamed file may be short or unwritten.

Zero-filling (not fallocate) is deliberate: overwriting written zeros commits
about twice as fast as writing into unwritten extents (disk-limits.md).
"""
from __future__ import annotations

import errno as errno_codes
import functools
import mmap
import os

from .io_rate import PIECE
from .modes import create_file
from .sequential_file import io_error

HUGE_PAGE = 2 << 20       # x86-64's transparent huge page
ZERO_CHUNK = HUGE_PAGE    # one large aligned write at a time
DIRECT_ALIGN = 4096


def aligned_buffer(size: int) -> mmap.mmap:
    """Page-aligned, pre-faulted anonymous memory of at least ``size`` bytes
    (zeros). From HUGE_PAGE up it is rounded up to whole huge pages and asks
    for transparent huge pages (taken where the kernel's THP mode is "always"
    or "madvise"; 4 KiB pages otherwise): an O_DIRECT write pins every source
    page and maps each into the request, so 2.6 MB writes from huge pages cost
    here a quarter of the system time and ~60 % of the wall time they cost from
    4 KiB pages."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
    if size < HUGE_PAGE:
        return mmap.mmap(-1, size, flags=flags | getattr(mmap, "MAP_POPULATE", 0))
    size = -(-size // HUGE_PAGE) * HUGE_PAGE
    buffer = mmap.mmap(-1, size, flags=flags)
    try:
        buffer.madvise(mmap.MADV_HUGEPAGE)
    except (AttributeError, OSError):
        pass                                   # no THP here: 4 KiB pages, as below the size
    buffer.write(bytes(size))                  # faulted in now, not inside the first write
    buffer.seek(0)
    return buffer


def fsync_dir(path: str) -> None:
    """fsyncs the directory ``path`` (makes creates, renames, unlinks in it durable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise io_error(error.errno or errno_codes.EIO, "syncing the directory", path) from error


def overwrite_durably(path: str, offset: int, data) -> None:
    """Overwrites bytes of an existing file in place and fdatasyncs: when it
    returns they are on disk; a crash before leaves old or new bytes (or a torn
    mix, which the reader's checksums catch)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
        try:
            write_all(fd, memoryview(data).cast("B"), offset)
            os.fdatasync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise io_error(error.errno or errno_codes.EIO, "overwriting", path, offset) from error


def sync_file(path: str) -> None:
    """fdatasyncs an existing file: what it holds (in the page cache too) is on
    disk when this returns."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fdatasync(fd)
        finally:
            os.close(fd)
    except OSError as error:
        raise io_error(error.errno or errno_codes.EIO, "syncing", path, 0) from error


def write_file_atomically(path: str, data, written=None, rate=None) -> None:
    """Replaces ``path`` with ``data``: tmp write, fsync, rename, directory
    fsync. ``written()``, if given, runs after the write, before the fsync
    (where crash tests stop a writer). Under a capped ``rate`` (io_rate.py)
    the data goes out in paced pieces, each written back to the disk before
    the next (fdatasync), so the page cache does not turn them into one burst
    at the fsync."""
    def write(fd: int) -> None:
        view = memoryview(data).cast("B")
        if rate is None or not rate.capped:
            write_all(fd, view, 0)
        else:
            for start in range(0, view.nbytes, PIECE):
                piece = view[start:start + PIECE]
                rate.take(piece.nbytes)
                write_all(fd, piece, start)
                os.fdatasync(fd)
        if written is not None:
            written()

    _publish(path, lambda tmp: create_file(tmp, os.O_WRONLY | os.O_TRUNC), write, "writing")


def _publish(path: str, open_tmp, write, action: str) -> None:
    """The one crash-safe way a whole file appears: written to ``path.tmp``,
    fsynced, renamed over ``path``, the folder fsynced. A crash leaves either no
    ``path`` (and a ``.tmp`` that loaders delete) or the complete file."""
    tmp = path + ".tmp"
    try:
        fd = open_tmp(tmp)
        try:
            write(fd)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as error:
        remove_quietly(tmp)
        raise io_error(error.errno or errno_codes.EIO, action, path) from error
    fsync_dir(os.path.dirname(os.path.abspath(path)))


def create_zero_filled(path: str, size: int, header_bytes) -> None:
    """Creates ``path`` as ``size`` bytes: ``header_bytes`` then zeros, written
    (not fallocated) with large aligned O_DIRECT writes where the file system
    takes them, else buffered; then fsync, rename from ``path.tmp``, dir fsync."""
    header = memoryview(header_bytes).cast("B")
    head = -(-header.nbytes // DIRECT_ALIGN) * DIRECT_ALIGN if header.nbytes else 0
    if head > min(size, ZERO_CHUNK):
        raise ValueError(f"a header of {header.nbytes} bytes does not fit in a {size}-byte file")

    def write(fd: int) -> None:
        if head:
            block = aligned_buffer(head)       # page-aligned: O_DIRECT takes it
            try:
                block[:header.nbytes] = header
                write_all(fd, memoryview(block)[:min(head, size)], 0)
            finally:
                close_quietly(block)
        zeros = _zero_chunk()
        for offset in range(head, size, ZERO_CHUNK):
            write_all(fd, zeros[:min(ZERO_CHUNK, size - offset)], offset)

    _publish(path, lambda tmp: _open_for_fill(tmp, direct=size % DIRECT_ALIGN == 0), write,
             "creating the data file")


@functools.cache
def _zero_chunk() -> memoryview:
    """ZERO_CHUNK bytes of zeros, page-aligned and faulted in once per process
    and never written, shared by every file created (a fresh mapping per file
    made each write fault in and zero its pages first: a sink rolling through
    files paid that twice per byte it stored)."""
    return memoryview(aligned_buffer(ZERO_CHUNK))


def close_quietly(buffer) -> None:
    """Unmaps ``buffer`` unless a view of it is still held (a failed write's
    traceback, a caller's slice): it is then unmapped when that goes, and no
    BufferError replaces the error being raised (ENOSPC)."""
    try:
        buffer.close()
    except BufferError:
        pass


def _open_for_fill(tmp: str, direct: bool) -> int:
    flags = os.O_WRONLY | os.O_TRUNC
    if direct:
        try:
            return create_file(tmp, flags | os.O_DIRECT)
        except OSError as error:
            if error.errno != errno_codes.EINVAL:     # EINVAL: no O_DIRECT here
                raise
    return create_file(tmp, flags)


def write_all(fd: int, view: memoryview, offset: int) -> None:
    done = 0
    while done < view.nbytes:
        wrote = os.pwrite(fd, view[done:], offset + done)
        if wrote <= 0:
            raise OSError(errno_codes.ENOSPC, os.strerror(errno_codes.ENOSPC))
        done += wrote


def remove_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
