"""How much of a lane to page: its size against ``maxSizeBytes``, and its
share of its node root's excess over ``maxRootSizeBytes`` (the biggest lanes
of a root page first).

A lane's size is the write path's (lane_size.py): the bytes of its data files
that hold data plus its large bodies, read from file headers alone (no load).
Files in the reuse pool do not count, so the size drops once reclaim frees the
files paging emptied.
"""
from __future__ import annotations

import os

from ..config import JournalConfig
from ..journal.lanes import list_lanes
from .lane_size import lane_bytes, lane_usage as lane_files


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
