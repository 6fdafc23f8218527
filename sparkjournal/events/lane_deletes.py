"""Deletes in a lane: what is deleted, as readers see it, and how a delete
request becomes journal records.

Readers see a lane's deletions as the union of its live deletion vector
records and its pending delete requests (requests.py). They must read the
requests *before* loading the snapshot: the writer removes a request only
after its records are durable, so a reader then sees it in one of the two
(or both: deletions are idempotent), never in neither.
"""
from __future__ import annotations

from .deletions import DELETION_VECTOR, Deletions, encode_vector
from .page_records import paged_record_ids
from .requests import pending

DELETE = "delete"


def prepared_record_ids(snapshot) -> set:
    return {record_id for tx in snapshot.prepared() for record_id in tx.record_ids}


# Where a record's rows can be visible besides the lane's live records: each
# function gives the ids of such records in a snapshot. A prepared transaction
# the commit log committed is visible before its COMMIT record is written;
# paged records (page_records.py) live in page files, whose reads apply the
# lane's deletion vectors by (record id, original position).
ROWS_ELSEWHERE = [prepared_record_ids, paged_record_ids]


def rows_elsewhere(snapshot) -> set:
    found = set()
    for holder in ROWS_ELSEWHERE:
        found |= holder(snapshot)
    return found


def pending_deletions(lane: str) -> Deletions:
    """What the lane's pending delete requests delete (read before a snapshot)."""
    deletions = Deletions()
    for _path, request in pending(lane):
        if request["kind"] == DELETE:
            for key, rows in request["records"].items():
                deletions.add(int(key), rows)
    return deletions


def lane_deletions(snapshot, pending_now: Deletions | None = None) -> Deletions:
    """The deleted rows of a lane: its live deletion vectors plus ``pending_now``."""
    deletions = Deletions()
    for record in snapshot.records():
        if record.user_type == DELETION_VECTOR:
            deletions.add_vector(record.body)
    if pending_now:
        deletions.merge(pending_now)
    return deletions


def carry_out_delete(journal, request: dict) -> None:
    """A delete request as records (the caller makes them durable): DELETE for
    a live record deleted whole, a deletion vector for rows of a live record or
    for rows visible elsewhere (``ROWS_ELSEWHERE``). Rows already deleted, and
    records gone, get nothing: carrying a request out again writes nothing."""
    current = lane_deletions(journal)
    elsewhere = None
    for key, rows in request["records"].items():
        record_id = int(key)
        if current.whole(record_id):
            continue
        live = journal.get(record_id) is not None
        if not live:
            elsewhere = rows_elsewhere(journal) if elsewhere is None else elsewhere
            if record_id not in elsewhere:
                continue                     # deleted already, or never in this lane
        if rows is None and live:
            journal.append_delete(record_id, sync=False)
            continue
        if rows is not None:
            rows = set(rows) - current.rows_of(record_id)
            if not rows:
                continue
        journal.append_add(journal.next_record_id(), encode_vector(record_id, rows),
                           user_type=DELETION_VECTOR, sync=False)


HANDLERS = {DELETE: carry_out_delete}
