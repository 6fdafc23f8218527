"""The seam between the journal and a file I/O backend (NIO or kernel AIO).

Contract for every backend:
* ``write`` takes a length that is a multiple of ``alignment`` at an aligned
  offset (the journal pads with zeros); anything else is a ValueError, a bug in
  the caller, never a disk error. ``write`` may return before the bytes reached
  the device; the caller may reuse its buffer as soon as write returns.
* ``sync`` returns once every write issued on this file has completed and (with
  datasync on) an fdatasync made them durable. Only bytes covered by a returned
  sync may be acknowledged to users.
* A failed write or sync raises JournalIOError naming the path, the offset and
  the errno text ("the disk is full" for ENOSPC). After that the backend makes
  no promise about bytes written but not synced: the journal must stop.
"""
from __future__ import annotations

import errno as errno_codes
import os
from abc import ABC, abstractmethod
from typing import Callable

from ..errors import JournalIOError


def io_error(err: int, action: str, path: str, offset: int | None = None) -> JournalIOError:
    """A JournalIOError with errno preserved and a plain-language message."""
    text = "the disk is full" if err == errno_codes.ENOSPC else os.strerror(err)
    where = f" at offset {offset}" if offset is not None else ""
    name = errno_codes.errorcode.get(err, str(err))
    return JournalIOError(err, f"{action} {path}{where} failed: {text} ({name})")


class SequentialFile(ABC):
    """One pre-created data file, open for aligned writes and plain reads."""

    path: str
    alignment: int

    def check_aligned(self, length: int, offset: int) -> None:
        if length % self.alignment or offset % self.alignment or offset < 0:
            raise ValueError(
                f"unaligned write to {self.path}: {length} bytes at offset {offset}; both "
                f"must be multiples of the {self.alignment}-byte block (pad with zeros)")

    @abstractmethod
    def write(self, data, offset: int) -> None: ...

    @abstractmethod
    def sync(self) -> None: ...

    def write_durably(self, data, offset: int) -> None:
        self.write(data, offset)
        self.sync()

    def write_alone(self, data, offset: int, seal: Callable[[], None]) -> None:
        """Writes a record that goes alone (Appender.append_alone) and syncs it.
        ``data`` holds the record with its body in place but its header not yet
        encoded; ``seal()`` encodes the header and CRC, changing no byte past the
        first block. A backend may start writing the blocks after the first
        before it calls ``seal`` (the CRC then overlaps the I/O); this one seals
        first. If ``seal`` raises, nothing of the first block was written."""
        seal()
        self.write_durably(data, offset)

    def read(self, offset: int, length: int) -> bytes:
        """Plain pread; short only at the end of the file."""
        fd = self._read_fd()
        try:
            parts, done = [], 0
            while done < length:
                chunk = os.pread(fd, length - done, offset + done)
                if not chunk:
                    break
                parts.append(chunk)
                done += len(chunk)
            return b"".join(parts)
        except OSError as error:
            raise io_error(error.errno or errno_codes.EIO, "reading", self.path, offset) from error

    @abstractmethod
    def _read_fd(self) -> int: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> "SequentialFile":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class SequentialFileFactory(ABC):
    """Opens data files with one backend; ``kind`` and ``reason`` say which and why."""

    kind: str           # "ASYNCIO" | "NIO"
    reason: str         # a sentence: probe result, forced by config, or fallback cause
    alignment: int      # write length and offset granularity (config.deviceBlockSize)

    @abstractmethod
    def open(self, path: str) -> SequentialFile:
        """Opens an existing, pre-created data file for reading and writing."""

    def close(self) -> None:
        """Frees backend resources; files opened from it must be closed first."""

    def __enter__(self) -> "SequentialFileFactory":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} kind={self.kind} alignment={self.alignment}: {self.reason}>"
