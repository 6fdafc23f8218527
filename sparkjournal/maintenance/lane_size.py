"""How much of the disk a lane and a node root hold, and whether a lane is full.

The size of a lane is what ``maxSizeBytes`` limits: its data files that hold
data (whole files: a data file is pre-created at ``fileSize``) plus its large
bodies. Not counted: free files in the writer's pool (reusable space, bounded
by ``poolFiles``), compaction's ``.cmp`` files in flight, the archive, the
attic, page files (paging moves events out of the journal precisely so they
stop counting) and the lane's small bookkeeping files.

A file holds data when its first record carries the file's own id: a freed
file keeps its old records but gets a new id (FORMAT.md, "Reuse"), a new one
is zeros. A file whose header cannot be read is counted whole: it is on disk,
and the next writer moves it to the attic.

Everything here reads the lane's folder as it is now, without the lane lock,
beside a writer and a compaction: a file removed while it is measured counts as
gone. The sizes are exact to the file, and cheap, so a writer checks them before
every task: one stat per file, and one small read only for a file modified in
the last ``SETTLED_SECONDS`` or since it was last read (a file's answer changes
only when it is written: its first record, a reuse's new header, a compaction's
rename; the settling time covers the coarse clock of file modification times).
"""
from __future__ import annotations

import dataclasses
import os
import threading
import time

from ..config import JournalConfig
from ..format import layout
from ..journal.datafile import BadHeader, decode_header, is_data_file_name
from ..journal.large import FOLDER as LARGE_FOLDER, SUFFIX as LARGE_SUFFIX
from ..journal.lanes import list_lanes

_FILE_ID_AT = 8                  # the file id field in a record header (layout.RECORD_HEADER)
SETTLED_SECONDS = 2.0
# lane: {file name: ((inode, mtime ns, size), holds data)}, for settled files
_known: dict[str, dict[str, tuple]] = {}
_known_lock = threading.Lock()


def _holds_data(path: str) -> bool | None:
    """Whether a data file holds records of its own; None if it is gone."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(layout.FILE_HEADER_SIZE + layout.RECORD_HEADER_SIZE)
    except FileNotFoundError:
        return None
    try:
        header = decode_header(raw[:layout.FILE_HEADER_SIZE], path)
    except BadHeader:
        return True
    if header.sealed_end:
        return header.sealed_end > layout.FILE_HEADER_SIZE
    first = raw[layout.FILE_HEADER_SIZE:]
    if len(first) < layout.RECORD_HEADER_SIZE or first[4] not in layout.TYPE_NAMES:
        return False
    file_id32 = int.from_bytes(first[_FILE_ID_AT:_FILE_ID_AT + 4], "little")
    return file_id32 == layout.file_id32(header.file_id)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


def lane_bytes(lane: str) -> int:
    """Bytes of the lane's data files holding data plus its large bodies (module doc)."""
    return lane_usage(lane)[1]


def lane_usage(lane: str) -> tuple[int, int]:
    """(data files holding data, lane_bytes): what maintenance reports before and after."""
    try:
        entries = [e for e in os.scandir(lane) if is_data_file_name(e.name)]
    except FileNotFoundError:
        return 0, 0
    with _known_lock:
        known = _known.get(lane, {})
    settled, total, files, now = {}, 0, 0, time.time_ns()
    for entry in entries:
        try:
            stat = entry.stat()
        except FileNotFoundError:
            continue
        key = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        remembered = known.get(entry.name)
        holds = remembered[1] if remembered is not None and remembered[0] == key else _holds_data(entry.path)
        if now - stat.st_mtime_ns > SETTLED_SECONDS * 1e9:
            settled[entry.name] = (key, holds)
        if holds:
            total += stat.st_size
            files += 1
    with _known_lock:
        _known[lane] = settled
    try:
        bodies = os.listdir(os.path.join(lane, LARGE_FOLDER))
    except FileNotFoundError:
        bodies = []
    return files, total + sum(_size(os.path.join(lane, LARGE_FOLDER, n))
                              for n in bodies if n.endswith(LARGE_SUFFIX))


def root_bytes(root: str) -> int:
    """Bytes of every lane of a node root (``lane-NNN`` folders) together."""
    return sum(lane_bytes(lane) for lane in list_lanes(root))


@dataclasses.dataclass(frozen=True)
class FullLane:
    """A lane over a limit: which limit, by how much, and what to do about it."""
    lane: str
    size: int                    # bytes of what is over: the lane, or its root
    limit: int
    key: str                     # the option that sets the limit
    root: str | None = None      # the node root, when the root limit is what is over

    @property
    def what(self) -> str:
        if self.root is None:
            return f"lane {self.lane} holds {self.size} bytes"
        return f"the lanes of node root {self.root} (with lane {self.lane}) hold {self.size} bytes"

    def message(self) -> str:
        return (f"{self.what} of data files and large bodies, over {self.key} {self.limit}. "
                f"Free space: run jobs/page.py (or `sparkjournal page`) to move the oldest "
                f"events to page files, or jobs/compact.py (or `sparkjournal compact`) to "
                f"reclaim dead records (set retention to make old events dead, or "
                f"sparkjournal.delete events); or raise {self.key}")


def check_full(lane: str, config: JournalConfig) -> FullLane | None:
    """The limit ``lane`` is over under ``config`` (maxSizeBytes for the lane,
    maxRootSizeBytes for the lanes of its node root together), or None. A lane
    is full once it holds more than the limit."""
    if config.maxSizeBytes >= 0:
        size = lane_bytes(lane)
        if size > config.maxSizeBytes:
            return FullLane(lane, size, config.maxSizeBytes, "maxSizeBytes")
    if config.maxRootSizeBytes >= 0:
        root = os.path.dirname(os.path.abspath(lane))
        lanes = [os.path.abspath(p) for p in list_lanes(root)]
        if os.path.abspath(lane) in lanes:
            size = root_bytes(root)
        else:                                  # a lone lane: it is its own root
            root, size = os.path.abspath(lane), lane_bytes(lane)
        if size > config.maxRootSizeBytes:
            return FullLane(lane, size, config.maxRootSizeBytes, "maxRootSizeBytes", root)
    return None
