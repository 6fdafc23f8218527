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
"""
from __future__ import annotations

import errno
import fcntl
import os
import struct

WHOLE_FILE_WRITE_LOCK = struct.pack("hhqqi", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)   # struct flock


def try_write_lock(fd: int) -> bool:
    """Takes the OFD write lock over the whole of ``fd``'s file; False while
    another process holds a record lock on any of it (a JVM's). Where none can
    be taken - a read-only descriptor, a kernel or filesystem without OFD
    locks - True: the caller's flock alone is then what there is."""
    try:
        fcntl.fcntl(fd, fcntl.F_OFD_SETLK, WHOLE_FILE_WRITE_LOCK)
        return True
    except OSError as error:
        if error.errno in (errno.EAGAIN, errno.EACCES):
            return False
        if error.errno in (errno.EBADF, errno.EINVAL):
            return True
        raise
