"""Turning a command-line PATH into the lanes it names (a wrong one is a
UsageError: exit status 2).

A PATH is either a journal root (a folder holding ``lane-NNN`` folders) or one
lane folder (holding ``data-*.sjd`` files, ``journal.lock``, ``large/``...).
Nothing here creates, locks or changes anything on disk.
"""
from __future__ import annotations

import os

from ..errors import UsageError
from ..journal.datafile import is_data_file_name
from ..journal.lanes import list_lanes
from ..journal.lock import LOCK_FILE

LANE_MARKERS = (LOCK_FILE, "large", "attic")


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


def lock_holder(lane_dir: str) -> int | None:
    """The pid holding the lane's writer lock, read from /proc/locks (never by
    trying the lock: a probe could make a starting writer fail). None when the
    lane is not locked or /proc/locks is unreadable."""
    try:
        st = os.stat(os.path.join(lane_dir, LOCK_FILE))
        with open("/proc/locks", encoding="ascii") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 7699 fe:00:2146741 0 EOF" ("->" marks a waiter)
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[2] != "->" and fields[5] == wanted:
            return int(fields[4])
    return None


def folder_listing(path: str) -> list[dict]:
    """[{name, bytes}] of the files directly in ``path`` (empty if it is missing)."""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except OSError:
        return []
    return [{"name": e.name, "bytes": e.stat().st_size} for e in entries if e.is_file()]
