"""Paging (``addressFullPolicy=PAGE``): a lane's oldest visible events move
out of the journal into Parquet page files, and the journal's space is reclaimed.

A lane is paged when its data bytes exceed ``maxSizeBytes``, when its node
root's exceed ``maxRootSizeBytes`` (the biggest lanes of the root page first,
until the excess is covered; page_limits.py), or when forced (one page). For
each page:

1. under the lane's maintenance lock (one compactor or pager per lane), the
   oldest live records of events (by record id) whose bodies add up to about
   ``pageSizeBytes`` are read through the lane scan (lane_scan.event_batch:
   deletes applied, commit times from the commit log) - exactly the rows a
   reader gets - and written as one page file (page_file.py);
2. a ``page`` request asks the lane's writer to commit it (page_commit.py: one
   transaction, the PAGE record and a DELETE per record moved, re-validated
   first); if no process holds the lane it is carried out here at once
   (lane_requests.apply_now), else by the holder at its next task;
3. once done, a lane that is free is opened once, which reclaims the data files
   holding only dead records (compaction later rewrites the rest).

Before paging, live pages whose events are all deleted are dropped
(page_drop.py: their PAGE records die in one committed transaction), then page
files that no live PAGE record and no pending request names are removed:
orphans of a paging killed before its transaction committed, of an abandoned
page, or of a dropped page. The removal holds the lane's file-set lock
exclusive (waiting up to ``REMOVE_WAIT_SECONDS`` for readers): a reader's
snapshot holds it shared from its load until it closes, so a reader that
loaded a dropped page's PAGE record live reads the file to the end; one whose
snapshot outlasts the wait leaves the orphans to the next run.

A pass's reads and writes share one budget, ``maintenanceBytesPerSecond``
(io/io_rate.py): it reads the lane's files into the page cache at that rate
when it starts (loader.prefetch_lane), so its loads, one per step and page,
find them there, and writes each page file paced by the same rate.

Crash behaviour: killed anywhere before the transaction commits, the records
stay live and are read from the journal (an orphan file or a pending request is
left; the request is still carried out, or abandoned if the records changed);
killed after, they are read from the page file. Nothing lost, nothing twice.
A drop's crash behaviour is page_drop.py's; an orphan removal killed midway
leaves orphans the next run removes.
Idempotent: records named by a pending page request are not paged again.

Retention reaches paged events as deletion vectors (maintenance/retention.py).
"""
from __future__ import annotations

import dataclasses
import logging
import os
import time

import pyarrow as pa

from ..config import JournalConfig
from ..events.event_records import EVENTS
from ..events.lane_deletes import lane_deletions, pending_deletions
from ..events.lane_scan import METADATA, LaneSlice, event_batch, spark_facing
from ..events.page_records import PAGES, live_pages
from ..events.requests import pending, submit
from ..events.resolve import commit_log, shared_log
from ..faults import crash_point
from ..format.constants import LANE_REQUEST, PAGE_REQUEST as FIELDS, REQUESTED_PAGE
from ..io.files_io import fsync_dir, remove_quietly
from ..journal.fileset import try_hold_exclusive, try_hold_maintenance
from ..journal.journal import Journal
from ..journal.loader import prefetch_lane
from .lane_requests import apply_now, as_free_writer
from .page_commit import PAGE_REQUEST
from .page_drop import DROP_REQUEST, drop_candidates, request_drops
from .page_file import write_page
from ..io.io_rate import IoRate
from .low_priority import run_at
from .page_limits import bytes_to_page, lane_files

log = logging.getLogger("sparkjournal.paging")
REMOVE_WAIT_SECONDS = 10.0            # how long orphan removal waits for readers


@dataclasses.dataclass
class PagingReport:
    lane: str
    paged: bool = False
    reason: str = ""                      # what happened, or why nothing did
    files_before: int = 0                 # data files of the lane
    files_after: int = 0
    pages_before: int = 0                 # page files of the lane
    pages_after: int = 0
    bytes_before: int = 0                 # bytes of the lane's data files
    bytes_after: int = 0
    records_paged: int = 0                # stored records moved into committed pages
    rows_paged: int = 0
    pages_written: int = 0                # committed
    pages_pending: int = 0                # left to the lane's live writer
    pages_abandoned: int = 0              # the records changed before the commit
    orphans_removed: int = 0              # page files removed (dropped pages' included)
    orphans_left: int = 0                 # readers held the lane past REMOVE_WAIT_SECONDS
    pages_dropped: int = 0                # PAGE records made dead: every event deleted
    drops_pending: int = 0                # drops left to the lane's live writer
    bytes_read_ahead: int = 0             # the lane's files read in at the pass's rate
    bytes_paced: int = 0                  # reads and writes taken from the pass's rate
    seconds: float = 0.0

    @property
    def bytes_reclaimed(self) -> int:
        return max(0, self.bytes_before - self.bytes_after)

    def line(self) -> str:
        text = (f"{self.lane}: paged {self.records_paged} records ({self.rows_paged} rows) into "
                f"{self.pages_written} page files" if self.paged else
                f"{self.lane}: not paged: {self.reason}")
        if self.pages_pending:
            text += f"; {self.pages_pending} pages left to the lane's live writer"
        if self.pages_abandoned:
            text += f"; {self.pages_abandoned} pages abandoned (records changed meanwhile)"
        if self.pages_dropped:
            text += f"; {self.pages_dropped} pages dropped (every event deleted)"
        if self.drops_pending:
            text += f"; {self.drops_pending} page drops left to the lane's live writer"
        if self.orphans_removed:
            text += (f"; {self.orphans_removed} orphan page files removed"
                     + (" (the dropped pages' among them)" if self.pages_dropped else ""))
        if self.orphans_left:
            text += (f"; {self.orphans_left} orphan page files left to the next run (readers "
                     f"held the lane)")
        return (text + f"; data files {self.files_before} -> {self.files_after}, "
                f"{self.bytes_reclaimed} bytes reclaimed; {self.seconds:.3f}s")


def page_lane(lane: str, node: str | None, log_uri: str, config: JournalConfig, *,
              force: bool = False) -> PagingReport:
    """Pages one lane of events if it is over a limit, or ``force`` (module doc),
    at maintenancePriority (low_priority.py)."""
    return run_at(config.maintenancePriority, lambda: _page_lane(lane, node, log_uri, config, force))


def _page_lane(lane: str, node: str | None, log_uri: str, config: JournalConfig,
               force: bool) -> PagingReport:
    started = time.monotonic()
    report = PagingReport(lane)
    report.files_before, report.bytes_before = lane_files(lane)
    report.pages_before = len(page_files(lane))
    maintenance = try_hold_maintenance(lane)
    if maintenance is None:
        report.reason = "another maintenance process holds the lane (compact.lock)"
    else:
        with maintenance:
            rate = IoRate(config.maintenanceBytesPerSecond)     # the pass's reads and writes
            if page_files(lane, with_tmp=True) or bytes_to_page(lane, config, force)[0] > 0:
                # The pass loads the lane once per step and page; its first read of
                # the lane is paced here, and the loads find it in the page cache.
                report.bytes_read_ahead = prefetch_lane(lane, rate)
            _drop_deleted_pages(lane, config, report)
            report.orphans_removed, report.orphans_left = remove_orphans(lane, config)
            # after the drops, whose commit may reclaim files: what is left to page
            budget, report.reason = bytes_to_page(lane, config, force)
            if budget > 0:
                _page(lane, node, log_uri, config, budget, report, rate)
            report.bytes_paced = rate.taken
        if report.pages_written:
            as_free_writer(lane, config, lambda journal: None)      # reclaims at open
    report.files_after, report.bytes_after = lane_files(lane)
    report.pages_after = len(page_files(lane))
    report.paged = report.pages_written > 0
    report.seconds = time.monotonic() - started
    log.info("%s", report.line())
    return report


def _drop_deleted_pages(lane, config, report: PagingReport) -> None:
    """page_drop.py's step 1: requests the drop of every live page with no
    row left and carries the requests out if the lane is free. A lane without
    page files costs no load."""
    names = drop_candidates(lane, config) if page_files(lane) else []
    if names:
        request_drops(lane, names)
    elif not any(request[LANE_REQUEST.KIND] == DROP_REQUEST for _path, request in pending(lane)):
        return
    if not apply_now(lane, config):
        report.drops_pending = len(names)          # the holder drops them at its next task
        return
    crash_point("page-drop:requests-done")        # dead and durable; the files still there
    if names:
        with Journal.read(lane, config) as snapshot:
            live = {ref.name for ref in live_pages(snapshot)}
        report.pages_dropped = sum(name not in live for name in names)


def _page(lane, node, log_uri, config, budget: int, report: PagingReport, rate: IoRate) -> None:
    stored = commit_log(log_uri).read_schema()
    if stored is None:
        report.reason = f"no events schema in the commit log {log_uri}: nothing written yet"
        return
    events_schema = spark_facing(stored)
    while budget > 0:
        page = _write_next_page(lane, node, log_uri, config, events_schema, rate)
        if page is None:
            report.reason = "no live events left to page"
            return
        ref, nbytes = page
        submit(lane, PAGE_REQUEST, {FIELDS.PAGE: ref.as_request()})
        if not apply_now(lane, config):
            report.pages_pending += 1             # records stay live until the holder commits
            report.reason = "the lane's live writer commits the page at its next task"
            return
        if not os.path.exists(ref.path(lane)):
            report.pages_abandoned += 1           # the records changed: the next run retries
            report.reason = "the records changed before the page was committed"
            return
        report.pages_written += 1
        report.records_paged += len(ref.record_ids)
        report.rows_paged += ref.rows
        budget -= nbytes


def _write_next_page(lane, node, log_uri, config, events_schema: pa.Schema, rate: IoRate):
    """Writes the next page of the lane's oldest live events not yet in a
    pending page; (its reference, the journal bytes it replaces), or None."""
    taken = _pending_page_ids(lane)
    deleted_by_requests = pending_deletions(lane)          # before the snapshot
    with Journal.read(lane, config) as snapshot:
        records = sorted((r for r in snapshot.records()
                          if r.user_type == EVENTS and r.record_id not in taken),
                         key=lambda r: r.record_id)
        chosen, nbytes = [], 0
        for record in records:
            if nbytes >= config.pageSizeBytes:
                break
            chosen.append(record)
            nbytes += record.body_len
        if not chosen:
            return None
        deletions = lane_deletions(snapshot, deleted_by_requests)
        log_, host = shared_log(log_uri), LaneSlice(lane, node, log_uri).host
        schema = pa.schema(list(events_schema) + list(METADATA))
        batches = [event_batch(r, log_, deletions, events_schema, host, os.path.basename(lane))
                   for r in chosen]
        table = pa.Table.from_batches([b for b in batches if b is not None], schema=schema)
        return write_page(lane, table, [r.record_id for r in chosen], rate), nbytes


def _pending_page_ids(lane: str) -> set:
    return {record_id for _path, request in pending(lane)
            if request[LANE_REQUEST.KIND] == PAGE_REQUEST
            for record_id in (request.get(FIELDS.PAGE) or {}).get(REQUESTED_PAGE.RECORD_IDS, ())}


def remove_orphans(lane: str, config: JournalConfig) -> tuple[int, int]:
    """Removes the lane's page files that no live PAGE record and no pending
    request names; (removed, left because readers held the lane). Call with
    the maintenance lock held: no page is written, committed or dropped
    meanwhile, so no orphan found here becomes live. The removal holds the
    file-set lock exclusive (module doc), taken after the snapshot is closed
    (this process's own shared hold would block it)."""
    orphans = orphan_pages(lane, config)
    if not orphans:
        return 0, 0
    held = try_hold_exclusive(lane, REMOVE_WAIT_SECONDS)
    if held is None:
        log.warning("lane %s: readers held it for %.0fs: %d orphan page files left for the "
                    "next paging run", lane, REMOVE_WAIT_SECONDS, len(orphans))
        return 0, len(orphans)
    with held:
        for name in orphans:
            remove_quietly(os.path.join(lane, PAGES, name))
        fsync_dir(os.path.join(lane, PAGES))
    log.info("lane %s: removed %d orphan page files: %s", lane, len(orphans), orphans)
    return len(orphans), 0


def orphan_pages(lane: str, config: JournalConfig) -> list[str]:
    """Names of the lane's page files (and ``.tmp`` files) that no live PAGE
    record and no pending page request names: never read again."""
    present = page_files(lane, with_tmp=True)
    if not present:
        return []
    named = requested_pages(lane)                                # before the snapshot
    with Journal.read(lane, config) as snapshot:
        named |= {ref.name for ref in live_pages(snapshot)}
    return [name for name in present if name not in named]


def requested_pages(lane: str) -> set:
    """Names of the page files pending ``page`` requests name (not orphans:
    their commit is on its way)."""
    return {(request.get(FIELDS.PAGE) or {}).get(REQUESTED_PAGE.NAME)
            for _path, request in pending(lane) if request[LANE_REQUEST.KIND] == PAGE_REQUEST}


def page_files(lane: str, with_tmp: bool = False) -> list[str]:
    try:
        names = os.listdir(os.path.join(lane, PAGES))
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.endswith(".parquet") or (with_tmp and n.endswith(".tmp")))
