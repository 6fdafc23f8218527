"""What one lane of events holds, in a person's terms: events live, deleted
and paged, bytes on disk, when it was last compacted and paged, and whether a
file is damaged - for ``sparkjournal status``.

Read-only and lock-free, as readers read (damaged files left out and
reported); counting rows decodes each live record's Arrow metadata, not its
columns.
"""
from __future__ import annotations

import dataclasses
import os

from ..journal.fileset import GENERATION_FILE        # rewritten by each compaction swap
from . import event_records
from .lane_deletes import lane_deletions, pending_deletions
from .lane_scan import read_snapshot
from .page_records import PAGES, live_pages
from .visible_events import lane_event_records


@dataclasses.dataclass
class LaneSummary:
    lane_dir: str
    node: str | None
    events_live: int = 0             # visible rows in the lane's records
    events_deleted: int = 0          # rows deletes removed from those records
    events_paged: int = 0            # rows in its live page files
    bytes_on_disk: int = 0           # data files, large bodies, page files
    page_files: int = 0
    last_compacted_ms: int | None = None
    last_paged_ms: int | None = None
    damaged: list = dataclasses.field(default_factory=list)   # "file: detail"


def _mtime_ms(path: str) -> int | None:
    try:
        return int(os.stat(path).st_mtime * 1000)
    except OSError:
        return None


def _disk_bytes(folder: str) -> int:
    total = 0
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_blocks * 512
            except OSError:
                pass                  # removed by a writer meanwhile
    return total


def summarize_lane(lane_dir: str, node: str | None, journal_options: dict) -> LaneSummary:
    summary = LaneSummary(lane_dir, node)
    deleted_by_requests = pending_deletions(lane_dir)          # before the snapshot, as readers
    with read_snapshot(lane_dir, journal_options, skip_corrupt=True) as snapshot:
        summary.damaged = [f"{os.path.basename(r.file)}: {r.detail}"
                           for r in snapshot.report.recoveries]
        deletions = lane_deletions(snapshot, deleted_by_requests)
        for record in lane_event_records(snapshot, node, os.path.basename(lane_dir)):
            batch = event_records.read_body(record.body)[0]
            kept = deletions.apply(batch, record.record_id)
            live = kept.num_rows if kept is not None else 0
            summary.events_live += live
            summary.events_deleted += batch.num_rows - live
        pages = live_pages(snapshot)
        summary.events_paged = sum(ref.rows for ref in pages)
        summary.page_files = len(pages)
    summary.bytes_on_disk = _disk_bytes(lane_dir)
    summary.last_compacted_ms = _mtime_ms(os.path.join(lane_dir, GENERATION_FILE))
    page_times = [_mtime_ms(os.path.join(lane_dir, PAGES, name))
                  for name in (os.listdir(os.path.join(lane_dir, PAGES))
                               if os.path.isdir(os.path.join(lane_dir, PAGES)) else [])]
    summary.last_paged_ms = max((t for t in page_times if t is not None), default=None)
    return summary
