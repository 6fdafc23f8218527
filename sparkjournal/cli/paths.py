"""Turning a command-line PATH into the lanes it names (a wrong one is a
UsageError: exit status 2).

A PATH is either a journal root (a folder holding ``lane-NNN`` folders) or one
lane folder (holding ``data-*.sjd`` files, ``journal.lock``, ``large/``...).
Nothing here creates, locks or changes anything on disk.
"""
from __future__ import annotations

import fcntl
import os
import tempfile

from ..errors import UsageError
from ..journal.datafile import is_data_file_name
from ..journal.lanes import list_lanes
from ..journal.lock import LOCK_FILE

LANE_MARKERS = (LOCK_FILE, "large", "attic")
LOCK_TABLE = "/proc/locks"
# A writer's entries: a Python writer's flock and OFD lock, a JVM writer's record lock.
HOLDER_KINDS = ("FLOCK", "POSIX", "OFDLCK")


def is_lane_folder(path: str) -> bool:
    try:
        names = os.listdir(path)
    except OSError:
        return False
    return any(is_data_file_name(n) or n in LANE_MARKERS for n in names)


def root_lanes(path: str) -> list[str]:
    """The ``lane-NNN`` folders directly inside ``path``, in lane order."""
    return list_lanes(path)


def find_lanes(path: str) -> list[tuple[str, str]]:
    """[(lane name, lane folder)] for a journal root or a single lane folder.
    UsageError when PATH is missing, not a folder, or holds no journal."""
    if not os.path.exists(path):
        raise UsageError(f"{path} does not exist")
    if not os.path.isdir(path):
        raise UsageError(f"{path} is not a folder: give a journal root (holding lane-NNN "
                         f"folders) or one lane folder")
    lanes = root_lanes(path)
    if lanes:
        return [(os.path.basename(lane), lane) for lane in lanes]
    if is_lane_folder(path):
        return [(os.path.basename(os.path.abspath(path)), path)]
    raise UsageError(f"{path} holds no journal: no lane-NNN folders and no data-*.sjd files")


def lock_holder(lane_dir: str) -> tuple[bool | None, int | None]:
    """Whether a process holds the lane's writer lock, and which, read from the
    kernel's lock table (never by trying the lock: a probe could make a starting
    writer fail): (True, its pid; None for an OFD lock alone), (False, None), or
    (None, None) when that cannot be told: the table unreadable or empty, which
    is one a sandbox hides (the kernel's is never empty here: this process
    holds an flock of its own, _hold_own_lock), as the JVM's WriterProbe counts it."""
    try:
        st = os.stat(os.path.join(lane_dir, LOCK_FILE))
    except FileNotFoundError:
        return False, None                  # nobody ever opened the lock file
    except OSError:
        return None, None
    try:
        _hold_own_lock()
        with open(LOCK_TABLE, encoding="ascii") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None, None
    if not lines:
        return None, None
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = []
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 7699 fe:00:2146741 0 EOF"; a waiter: "1: -> FLOCK ..."
        if len(fields) >= 6 and fields[1] in HOLDER_KINDS and fields[5] == wanted:
            pids.append(int(fields[4]))
    if not pids:
        return False, None
    return True, next((pid for pid in pids if pid > 0), None)


_own_lock: list = []                       # the flock this process holds for its life


def _hold_own_lock() -> None:
    """An flock of this process's own on a nameless temporary file, taken once:
    the kernel's lock table is never empty to this process while it is held."""
    if not _own_lock:
        own = tempfile.TemporaryFile()
        fcntl.flock(own, fcntl.LOCK_EX)
        _own_lock.append(own)


def folder_listing(path: str) -> list[dict]:
    """[{name, bytes}] of the files directly in ``path`` (empty if it is missing)."""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return []
    return [{"name": e.name, "bytes": e.stat().st_size} for e in entries if e.is_file()]
