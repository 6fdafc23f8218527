"""Who may change which data files a lane has, while others read them.

Besides the writer's ``journal.lock`` (lock.py), a lane has two more locks and
a counter, all plain files in the lane folder:

* ``files.lock`` - the file-set lock. A reader (``Journal.read``) holds it
  SHARED from before it lists the lane's files until its snapshot is closed, so
  the files it mapped keep the bytes it planned to read. Whoever reuses,
  deletes or replaces data files holds it EXCLUSIVE for that change only: the
  writer's reclaim tries and never waits (a lane being read reclaims at a later
  roll), a compaction's swap waits a bounded time for readers to finish.
  Appending, rolling into a file of the free pool and creating new files take
  no lock: a reader scanning a file that gains records sees them or stops at
  its end of data, and a pool file holds nothing of its own.
* ``compact.lock`` - held EXCLUSIVE by one maintenance process for its whole
  run on a lane. While it is held the writer does not reclaim, so the files a
  compaction planned from stay as they were until it swaps them.
* ``files.gen`` - the number of the last compaction swap (0 when none). A
  writer whose loaded state is older reloads before it reclaims: its file ids
  and offsets name files that are gone.

JVM readers (the connector, jvm/.../journal/FileSetLock.java) cannot take an
flock: the JDK's file locks are POSIX record locks, which on Linux never meet
flock. They hold a shared record lock over the whole of ``files.lock``
instead, so every exclusive taker here also takes an open-file-description
record lock for writing (record_lock.py: it meets record locks of other
processes, and belongs to this descriptor, not to the process, so closing
another descriptor of the file here drops nothing). It is tried after the
flock and never waited for while the flock is held: refused, the flock is let
go and the taker polls on, as it does for Python readers. Where the lock file
could only be opened read-only (a lane folder no one may change), the flock
alone keeps takers apart; where the kernel or filesystem has no OFD locks an
exclusive taker is refused (LockSupportError, record_lock.py).

flock and OFD locks die with their process: a killed reader, writer or
compactor never leaves a lane locked. A lane whose folder cannot hold a new lock file (a
read-only folder that never had a writer) has no one to change its files, so a
reader then reads without the lock.
"""
from __future__ import annotations

import errno
import fcntl
import os
import time

from ..io.modes import READ_ONLY, create_file
from .record_lock import try_write_lock

FILES_LOCK = "files.lock"
MAINTENANCE_LOCK = "compact.lock"
GENERATION_FILE = "files.gen"
POLL_SECONDS = 0.01


class HeldLock:
    """One flock held on an open file; ``release`` is idempotent."""

    def __init__(self, fd: int | None):
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _open(path: str, create: bool) -> int | None:
    try:
        return create_file(path, os.O_RDWR) if create else os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno in READ_ONLY:
            return _open(path, create=False) if create else None
        raise


def _flock(path: str, mode: int, wait_seconds: float | None, create: bool = True) -> HeldLock | None:
    """Takes ``mode`` on ``path``: blocking when ``wait_seconds`` is None, else
    polling up to that long; None if it could not (or there is no lock file and
    it cannot be made, see the module doc)."""
    fd = _open(path, create)
    if fd is None:
        return None
    deadline = None if wait_seconds is None else time.monotonic() + wait_seconds
    exclusive = mode == fcntl.LOCK_EX
    while True:
        try:
            # an exclusive taker polls: it must not sit on the flock waiting for a JVM reader
            fcntl.flock(fd, mode if deadline is None and not exclusive else mode | fcntl.LOCK_NB)
            if not exclusive or try_write_lock(fd, path):
                return HeldLock(fd)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                os.close(fd)
                raise
        except BaseException:
            os.close(fd)
            raise
        if deadline is not None and time.monotonic() >= deadline:
            os.close(fd)
            return None
        time.sleep(POLL_SECONDS)


def hold_for_reading(lane: str) -> HeldLock:
    """Shared file-set lock for a reader; waits out a swap or reclaim in progress.
    A lane without a lock file that cannot get one needs none (module doc)."""
    held = _flock(os.path.join(lane, FILES_LOCK), fcntl.LOCK_SH, None)
    return held if held is not None else HeldLock(None)


def try_hold_exclusive(lane: str, wait_seconds: float = 0.0) -> HeldLock | None:
    """Exclusive file-set lock, or None if readers hold it past ``wait_seconds``."""
    return _flock(os.path.join(lane, FILES_LOCK), fcntl.LOCK_EX, wait_seconds)


def try_hold_maintenance(lane: str) -> HeldLock | None:
    """The lane's maintenance lock, or None if another maintenance process runs."""
    return _flock(os.path.join(lane, MAINTENANCE_LOCK), fcntl.LOCK_EX, 0.0)


def maintenance_running(lane: str) -> bool:
    """Does a live process hold the lane's maintenance lock right now?"""
    probe = _flock(os.path.join(lane, MAINTENANCE_LOCK), fcntl.LOCK_SH, 0.0, create=False)
    if probe is None:
        return os.path.exists(os.path.join(lane, MAINTENANCE_LOCK))
    probe.release()
    return False


def read_generation(lane: str) -> int:
    """The last swap's number; 0 when there was none. A damaged counter reads
    as -1, which differs from every generation a writer loaded, so the writer
    reloads rather than trust it."""
    try:
        with open(os.path.join(lane, GENERATION_FILE), "rb") as handle:
            text = handle.read().strip()
    except FileNotFoundError:
        return 0
    return int(text) if text.isdigit() else -1      # bytes.isdigit: ASCII digits only
