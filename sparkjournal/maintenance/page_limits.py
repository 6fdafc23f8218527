"""How much of a lane to page: its size against ``maxSizeBytes``, and its
share of its node root's excess over ``maxRootSizeBytes`` (the biggest lanes
of a root page first).

A lane's size is the bytes of its data files that hold data plus its large
bodies, read from file headers alone (no load): files in the reuse pool do not
count, so the size drops once reclaim frees the files paging emptied. This is
paging's own measure until the write path's size check
(maintenance/lane_size.py, another branch) lands; the two should become one.
"""
from __future__ import annotations

import os

from ..config import JournalConfig
from ..errors import SparkJournalError
from ..format import layout
from ..journal.datafile import BadHeader, decode_header, is_data_file_name
from ..journal.lanes import list_lanes


def lane_files(lane: str) -> tuple[int, int]:
    """(data files holding data, their bytes plus the lane's large bodies): the
    lane's size for its limits. Files in the reuse pool (freed by reclaim, their
    first record stale) do not count. Read from headers only, no load."""
    files = [os.path.join(lane, name) for name in os.listdir(lane) if is_data_file_name(name)]
    used = [path for path in files if _holds_data(path)]
    size = sum(os.path.getsize(path) for path in used)
    try:
        size += sum(e.stat().st_size for e in os.scandir(os.path.join(lane, "large")) if e.is_file())
    except FileNotFoundError:
        pass
    return len(used), size


def _holds_data(path: str) -> bool:
    """Whether a data file's first record slot holds a record of this file."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(layout.FILE_HEADER_SIZE + layout.RECORD_HEADER_SIZE)
        header = decode_header(head[:layout.FILE_HEADER_SIZE], path)
    except (OSError, SparkJournalError, BadHeader):
        return True                       # unreadable: counted, the loader reports it
    if len(head) < layout.FILE_HEADER_SIZE + layout.RECORD_HEADER_SIZE:
        return False
    fields = layout.RECORD_HEADER.unpack_from(head, layout.FILE_HEADER_SIZE)
    rtype, file_id32 = fields[1], fields[4]
    return rtype != 0 and file_id32 == layout.file_id32(header.file_id)


def lane_bytes(lane: str) -> int:
    return lane_files(lane)[1]


def bytes_to_page(lane: str, config: JournalConfig, force: bool) -> tuple[int, str]:
    """(journal bytes of events to page from ``lane``, why); 0 when under its limits."""
    if force:
        return config.pageSizeBytes, "forced"
    if config.addressFullPolicy != "PAGE":
        return 0, f"addressFullPolicy is {config.addressFullPolicy}, not PAGE"
    if config.maxSizeBytes < 0 and config.maxRootSizeBytes < 0:
        return 0, "no maxSizeBytes or maxRootSizeBytes set"
    size = lane_bytes(lane)
    excess = size - config.maxSizeBytes if config.maxSizeBytes >= 0 else 0
    if config.maxRootSizeBytes >= 0:
        excess = max(excess, root_share(lane, config.maxRootSizeBytes))
    if excess <= 0:
        return 0, (f"{size} bytes, within maxSizeBytes {config.maxSizeBytes} and "
                   f"maxRootSizeBytes {config.maxRootSizeBytes}")
    return excess, f"{excess} bytes over the limit"


def root_share(lane: str, limit: int) -> int:
    """The part of its root's excess over ``limit`` this lane pages: the biggest
    lanes take it first (ties by name), each at most its own size."""
    lane = os.path.abspath(lane)
    sizes = {os.path.abspath(other): lane_bytes(other) for other in list_lanes(os.path.dirname(lane))}
    excess = sum(sizes.values()) - limit
    for other in sorted(sizes, key=lambda path: (-sizes[path], path)):
        if excess <= 0:
            return 0
        share = min(excess, sizes[other])
        if other == lane:
            return share
        excess -= share
    return 0
