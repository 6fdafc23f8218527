"""Retention: old committed events become dead.

``retention`` (config.JOURNAL) is an age or a size per lane:

* an age: a stored record of events is dead once its batch's decision (the
  commit log's ``committed_at_ms``) is older than the age;
* a size: per lane, the newest stored records (by record id) whose bodies add
  up to the size stay; older ones are dead.

Dead records are deleted whole through a delete request (events/requests.py),
so readers stop seeing them as soon as the request is durable and compaction
reclaims their space. Records whose batch has no decision (undecided prepared
transactions) are never touched: they are not visible, hence not old.

Paged events (paging.py) age the same way: their records are deleted whole
too (as deletion vectors, since their rows live in a page file; readers leave
them out at once), their sizes estimated from their page's bytes per row. A
page whose every record is deleted is dropped, its file removed, by the paging
step of the same pass (page_drop.py).

Crash behaviour: as any delete request. A retention run killed before its
request is durable deleted nothing; running it again finds the same records.
"""
from __future__ import annotations

import dataclasses
import os
import time

import pyarrow as pa
import pyarrow.parquet as pq

from ..config import JournalConfig
from ..events import event_records
from ..events.lane_deletes import DELETE
from ..events.lane_deletes import lane_deletions, pending_deletions
from ..events.page_records import live_pages
from ..events.page_scan import check_page
from ..events.requests import submit
from ..events.resolve import shared_log
from ..format.constants import DELETE_REQUEST as FIELDS, METADATA_COLUMNS as COLUMNS
from ..events.visible_events import lane_event_records
from ..journal.journal import Journal


@dataclasses.dataclass
class RetentionReport:
    lane: str
    records: int = 0                      # stored records that became dead
    bytes: int = 0
    request: str | None = None

    def line(self) -> str:
        if not self.records:
            return f"{self.lane}: retention: nothing past it"
        return f"{self.lane}: retention: {self.records} stored records ({self.bytes} bytes) past it"


def expired_records(lane: str, node: str | None, log_uri: str, config: JournalConfig,
                    now: float | None = None) -> dict[int, int]:
    """{record id: body bytes} of the lane's visible event records past retention."""
    if not config.retention:
        return {}
    kind, amount = config.retention
    now = time.time() if now is None else now
    already = pending_deletions(lane)                       # before the snapshot
    log_ = shared_log(log_uri)
    with Journal.read(lane, config) as snapshot:
        records = paged_records(lane, snapshot, lane_deletions(snapshot, already))
        for record in lane_event_records(snapshot, node, os.path.basename(lane)):
            if already.whole(record.record_id):
                continue
            query, batch = event_records.batch_of(event_records.split_body(record.body)[0])
            at_ms = log_.committed_at_ms(query, batch) if query is not None else None
            if at_ms is not None:
                records.append((record.record_id, record.body_len, at_ms / 1e3))
    if kind == "age":
        return {rid: size for rid, size, committed in records if committed < now - amount}
    expired, kept = {}, 0
    for rid, size, _committed in sorted(records, reverse=True):
        kept += size
        if kept > amount:
            expired[rid] = size
    return expired


def paged_records(lane: str, snapshot, deletions) -> list[tuple[int, int, float]]:
    """(record id, estimated bytes, commit time in s) of the records of the
    snapshot's pages not deleted whole yet, from their ``_record_id`` and
    ``_commit_time`` columns alone. Raises PageFileError for a page file
    page_scan.check_page refuses (without the prefix rule)."""
    found = []
    for ref in live_pages(snapshot):
        check_page(lane, ref)
        table = pq.read_table(ref.path(lane), columns=[COLUMNS.RECORD_ID, COLUMNS.COMMIT_TIME])
        per_row = ref.size / max(ref.rows, 1)
        times = table.column(COLUMNS.COMMIT_TIME).cast(pa.int64()).to_pylist()
        rows: dict[int, list] = {}
        for record_id, committed in zip(table.column(COLUMNS.RECORD_ID).to_pylist(), times):
            rows.setdefault(record_id, [0, committed])[0] += 1
        for record_id, (count, committed) in rows.items():
            if committed is not None and not deletions.whole(record_id):
                found.append((record_id, int(count * per_row), committed / 1e6))
    return found


def apply_retention(lane: str, node: str | None, log_uri: str, config: JournalConfig,
                    now: float | None = None) -> RetentionReport:
    """Submits the lane's expired records for deletion; returns what it did."""
    report = RetentionReport(lane)
    expired = expired_records(lane, node, log_uri, config, now)
    if expired:
        report.records, report.bytes = len(expired), sum(expired.values())
        report.request = submit(lane, DELETE, {
            FIELDS.RECORDS: {str(rid): None for rid in sorted(expired)},
            FIELDS.WHY: f"retention {config.retention[0]} {config.retention[1]:g}"})
    return report
