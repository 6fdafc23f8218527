"""The lock a JVM meets: an open-file-description write lock over a whole file.

The JDK's file locks (``FileChannel.lock``) are POSIX record locks, which on
Linux never meet ``flock``. So where a lock file is shared with JVM code
(``journal.lock``, lock.py; ``files.lock``, fileset.py) an exclusive taker
holds, besides its flock, an OFD record lock for writing over the whole file
(``F_OFD_SETLK``): it meets the record locks of other processes, belongs to the
open file description it was taken on (closing another descriptor of the file
in this process drops nothing; closing the last descriptor of that description
releases it), and dies with the process, so a killed taker leaves nothing held.
It is only ever tried, never waited for.

Where the kernel or filesystem has no OFD locks (``EINVAL``: kernels before
3.15, some network and FUSE filesystems, some sandboxes) nothing else both
runtimes meet can stand in for it (a classic POSIX lock is dropped when any
descriptor of the file in this process closes, which lock probes do), so the
taker is refused with LockSupportError rather than left holding only its
flock, which a JVM never meets.
"""
from __future__ import annotations

import errno
import fcntl
import os
import struct

from ..errors import LockSupportError

WHOLE_FILE_WRITE_LOCK = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)   # struct flock


def try_write_lock(fd: int, path: str) -> bool:
    """Takes the OFD write lock over the whole of ``fd``'s file (``path``, for
    messages); False while another process holds a record lock on any of it
    (a JVM's). True for a read-only descriptor (a lane folder no one may
    change: its flock alone is what there is). Raises LockSupportError where
    OFD locks do not exist."""
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, WHOLE_FILE_WRITE_LOCK)
        return True
    except OSError as error:
        if error.errno in (errno.EAGAIN, errno.EACCES):
            return False
        if error.errno == errno.EBADF:
            return True
        if error.errno == errno.EINVAL:
            raise LockSupportError(
                f"cannot lock {path}: this kernel or filesystem has no open file description "
                f"locks (fcntl F_OFD_SETLK: EINVAL), the lock that keeps a JVM writer or reader "
                f"out while a Python process writes the lane or swaps its files. Nothing was "
                f"opened. Put the journal on a local filesystem of a Linux 3.15+ kernel (ext4, "
                f"xfs), or write it from the JVM only (JournalSink writer='jvm')") from None
        raise
