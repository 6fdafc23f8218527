"""The one-writer rule: an exclusive lock on ``journal.lock`` in the lane.

A Python writer holds an ``flock`` on it and, on the same descriptor, an OFD
write lock over the whole file (record_lock.py); a JVM writer
(jvm/.../journal/LaneWriterLock.java) holds a POSIX record lock over the whole
file, which the JDK can take where it cannot take an flock. The flock keeps
Python writers apart, the record locks keep Python and JVM writers apart. The
OFD lock is tried after the flock, never waited for: refused, the flock is let
go and the lane counts as held. Where the kernel or filesystem has no OFD
locks, taking the lock fails with LockSupportError (record_lock.py): a Python
writer never opens a lane it could share with a JVM writer.
Whoever holds the lock writes its pid into the file, for error messages.

The kernel drops both locks when the holding process dies, however it dies,
so a lane whose writer was killed is free at once; readers never take it.
"""
from __future__ import annotations

import errno
import fcntl
import os
import time

from ..errors import JournalLockedError
from ..io.modes import create_file
from .record_lock import try_write_lock

LOCK_FILE = "journal.lock"


class LaneLock:
    def __init__(self, lane_dir: str):
        self.path = os.path.join(lane_dir, LOCK_FILE)
        self._fd: int | None = None

    def try_acquire(self) -> bool:
        fd = create_file(self.path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            os.close(fd)
            if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
            raise
        try:
            held = try_write_lock(fd, self.path)
            if not held:                 # a JVM writer holds its record lock
                fcntl.flock(fd, fcntl.LOCK_UN)
        except BaseException:
            os.close(fd)
            raise
        if not held:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def acquire(self, wait: bool, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self.try_acquire():
            if not wait or (deadline is not None and time.monotonic() > deadline):
                raise JournalLockedError(
                    f"{os.path.dirname(self.path)} has a writer already (process "
                    f"{self.holder() or 'unknown'} holds {self.path}); one process writes a "
                    f"journal at a time. Open another lane through JournalRoot, or pass "
                    f"lockWait=true to wait for it")
            time.sleep(0.05)

    def holder(self) -> str:
        try:
            with open(self.path, encoding="ascii") as handle:
                return handle.read().strip()
        except OSError:
            return ""

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
