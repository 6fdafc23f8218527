"""NIO backend: buffered os.pwrite plus os.fdatasync.

Writes land in the page cache and return at once; ``sync`` makes them durable.
Works on every file system; chosen when O_DIRECT or the C core is missing, or
when journalType=NIO. Blocking calls release the GIL (CPython os functions).

Data files are pre-created with O_DIRECT, so none of their pages is cached.
A buffered write that ends inside a page makes the kernel read that page from
the disk first, one synchronous read per commit (a 4 KiB commit writes 4608
bytes): measured here, 0.5x the commits/s of the same writes into cached pages.
Opening a file therefore asks the kernel to read it ahead (POSIX_FADV_WILLNEED,
asynchronous; a hint, so where it is refused nothing else changes).
"""
from __future__ import annotations

import errno as errno_codes
import os

from .sequential_file import SequentialFile, SequentialFileFactory, io_error


class NioFile(SequentialFile):
    def __init__(self, path: str, alignment: int, datasync: bool):
        self.path, self.alignment, self._datasync = path, alignment, datasync
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError as error:
            raise io_error(error.errno or errno_codes.EIO, "opening", path) from error
        read_ahead(self._fd)

    def write(self, data, offset: int) -> None:
        view = memoryview(data).cast("B")
        self.check_aligned(view.nbytes, offset)
        done = 0
        try:
            while done < view.nbytes:
                wrote = os.pwrite(self._fd, view[done:], offset + done)
                if wrote <= 0:       # a zero-length write means no space: do not spin
                    raise OSError(errno_codes.ENOSPC, os.strerror(errno_codes.ENOSPC))
                done += wrote
        except OSError as error:
            raise io_error(error.errno or errno_codes.EIO, f"writing {view.nbytes} bytes to",
                           self.path, offset + done) from error

    def sync(self) -> None:
        if not self._datasync:
            return
        try:
            os.fdatasync(self._fd)
        except OSError as error:
            raise io_error(error.errno or errno_codes.EIO, "syncing", self.path) from error

    def _read_fd(self) -> int:
        return self._fd

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


def read_ahead(fd: int) -> None:
    """Starts reading the whole file into the page cache, without waiting."""
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
    except (OSError, AttributeError):       # not supported here: writes are slower, not wrong
        pass


class NioFactory(SequentialFileFactory):
    kind = "NIO"

    def __init__(self, config, reason: str):
        self.reason = reason
        self.alignment = config.deviceBlockSize
        self._datasync = config.datasync

    def open(self, path: str) -> NioFile:
        return NioFile(path, self.alignment, self._datasync)
