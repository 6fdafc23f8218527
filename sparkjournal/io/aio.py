"""ASYNCIO backend: O_DIRECT file descriptors written through the C kernel-AIO
writer (native/sj_aio.c).

One writer context per factory keeps at most ``config.maxIO`` writes in flight
across all its files, each copied into a reused aligned buffer, so ``write``
returns as soon as the bytes are submitted and the caller's buffer is free.
Writes complete in submit order as far as ``sync`` can tell; ``sync`` waits for
this file's last write, then fdatasyncs. After a failed write the context
refuses every later write with the same error (the journal stops).
Reads use a second, ordinary descriptor (no alignment needed).
"""
from __future__ import annotations

import errno as errno_codes
import os

from ..errors import JournalIOError, NativeUnavailableError
from ..format import layout
from .sequential_file import SequentialFile, SequentialFileFactory, io_error

try:
    from sparkjournal._sjnative import ffi, lib
except ImportError:   # C core not built: probe.py never picks this backend then
    ffi = lib = None


class AioFile(SequentialFile):
    def __init__(self, factory: "AioFactory", path: str):
        self.path, self.alignment = path, factory.alignment
        self._factory = factory
        self._last_seq = 0
        self._reader = -1
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_DIRECT | os.O_CLOEXEC)
        except OSError as error:
            raise io_error(error.errno or errno_codes.EIO, "opening (O_DIRECT)", path) from error

    def write(self, data, offset: int) -> None:
        ctx = self._factory.context()
        if isinstance(data, bytes):     # the common case: passed to C without a buffer export
            size = len(data)
            if size <= self._factory.max_write and not (size | offset) % self.alignment \
                    and size and offset >= 0:
                self._submit(ctx, data, size, offset)
                return
        view = memoryview(data).cast("B")
        self.check_aligned(view.nbytes, offset)
        step = self._factory.max_write
        for start in range(0, view.nbytes, step):
            part = view[start:start + step]
            with ffi.from_buffer(part) as pointer:
                self._submit(ctx, pointer, part.nbytes, offset + start)

    def _submit(self, ctx, pointer, size: int, offset: int) -> None:
        seq = lib.sj_aio_write(ctx, self._fd, pointer, size, offset)
        if seq < 0:
            raise self._factory.failure(-seq, f"writing {size} bytes to", self.path, offset)
        self._last_seq = seq

    def sync(self) -> None:
        ctx = self._factory.context()
        if self._last_seq:
            done = lib.sj_aio_wait(ctx, self._last_seq)
            if done < 0:
                raise self._factory.failure(-done, "writing to", self.path, None)
        if self._factory.datasync:
            result = lib.sj_fdatasync(self._fd)
            if result < 0:
                raise io_error(-result, "syncing", self.path)

    def write_durably(self, data, offset: int) -> None:
        """One C call (one GIL release): waits for queued writes, pwrites ``data``
        straight from the caller's buffer when it is block aligned (the
        appender's buffers are), and fdatasyncs; else write() then sync()."""
        ctx = self._factory.context()
        with ffi.from_buffer(data) as pointer:
            size = len(pointer)
            done = lib.sj_aio_write_sync(ctx, self._fd, pointer, size, offset,
                                         1 if self._factory.datasync else 0)
        if done == 1:
            super().write_durably(data, offset)
        elif done < 0:
            raise self._factory.failure(-done, f"writing {size} bytes durably to",
                                        self.path, offset)

    def write_alone(self, data, offset: int, seal) -> None:
        """Overlaps ``seal`` (header and CRC) with the write of the blocks after
        the first, which go first, straight from ``data`` (native/sj_aio_alone.c)."""
        first = -(-layout.RECORD_HEADER_SIZE // self.alignment) * self.alignment
        with ffi.from_buffer(data) as pointer:
            size = len(pointer)
            if size <= first or int(ffi.cast("uintptr_t", pointer)) % self.alignment:
                super().write_alone(data, offset, seal)
                return
            ctx, alone = self._factory.context(), self._factory.alone_writer()
            done = lib.sj_alone_begin(alone, ctx, self._fd, pointer, size, offset, first)
            if done < 0:
                raise self._alone_failure(-done, size, offset)
            try:
                seal()
            except BaseException:
                lib.sj_alone_finish(alone, ctx, self._fd, ffi.NULL, 0, offset, 0)
                raise
            done = lib.sj_alone_finish(alone, ctx, self._fd, pointer, first, offset,
                                       1 if self._factory.datasync else 0)
        if done < 0:
            raise self._alone_failure(-done, size, offset)

    def _alone_failure(self, err: int, size: int, offset: int) -> JournalIOError:
        """A failure of one of this record's own writes names where it failed;
        one of a write queued before it says so (AioFactory.failure)."""
        failed_at = lib.sj_aio_error_offset(self._factory.context())
        if offset <= failed_at < offset + size:
            return io_error(err, f"writing the {size}-byte record at offset {offset} durably to",
                            self.path, failed_at)
        return self._factory.failure(err, f"writing {size} bytes durably to", self.path, offset)

    def _read_fd(self) -> int:
        if self._reader < 0:
            try:
                self._reader = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as error:
                raise io_error(error.errno or errno_codes.EIO, "opening", self.path) from error
        return self._reader

    def close(self) -> None:
        """Waits for this file's writes (the kernel must not write into a closed
        descriptor's file after close returns), then closes both descriptors."""
        try:
            if self._last_seq and self._factory.is_open:
                lib.sj_aio_wait(self._factory.context(), self._last_seq)
        finally:
            for name in ("_fd", "_reader"):
                fd = getattr(self, name)
                if fd >= 0:
                    setattr(self, name, -1)
                    os.close(fd)


class AioFactory(SequentialFileFactory):
    kind = "ASYNCIO"

    def __init__(self, config, reason: str):
        if lib is None:
            raise NativeUnavailableError(
                "journalType=ASYNCIO needs the C core (sparkjournal._sjnative), which is not "
                "built: reinstall sparkjournal where a C compiler is available, or use "
                "journalType=AUTO or NIO")
        self.reason = reason
        self.alignment = config.deviceBlockSize
        self.datasync = config.datasync
        self.max_io = config.maxIO
        self.max_write = -(-config.bufferSize // self.alignment) * self.alignment
        self._alone = None                   # records written alone: made on first use
        err = ffi.new("int *")
        self._ctx = lib.sj_aio_create(self.max_io, self.max_write, self.alignment, err)
        if self._ctx == ffi.NULL:
            raise io_error(err[0], f"setting up kernel AIO ({self.max_io} in flight) for",
                           "the journal")

    @property
    def is_open(self) -> bool:
        return self._ctx is not None

    def context(self):
        if self._ctx is None:
            raise JournalIOError(errno_codes.EBADF, "the AIO file factory was closed")
        return self._ctx

    def failure(self, err: int, action: str, path: str, offset: int | None) -> JournalIOError:
        """The error for a refused or failed write. When an earlier queued write
        failed (possibly to another file of this factory), it names its offset."""
        failed_at = lib.sj_aio_error_offset(self.context())
        if failed_at < 0 or failed_at == offset:
            return io_error(err, action, path, offset)
        if offset is None:
            return io_error(err, "a queued write to", path, failed_at)
        return io_error(err, f"an earlier queued write (at offset {failed_at}) failed, so {action}",
                        path, offset)

    def alone_writer(self):
        if self._alone is None:
            err = ffi.new("int *")
            alone = lib.sj_alone_create(self.alignment, err)
            if alone == ffi.NULL:
                raise io_error(err[0], "setting up kernel AIO for records written alone in",
                               "the journal")
            self._alone = alone
        return self._alone

    @property
    def max_in_flight_seen(self) -> int:
        """Most writes that were ever in flight at once (never above maxIO)."""
        return lib.sj_aio_max_seen(self.context())

    def open(self, path: str) -> AioFile:
        self.context()
        return AioFile(self, path)

    def close(self) -> None:
        if self._alone is not None:
            alone, self._alone = self._alone, None
            lib.sj_alone_destroy(alone)
        if self._ctx is not None:
            ctx, self._ctx = self._ctx, None
            lib.sj_aio_destroy(ctx)
