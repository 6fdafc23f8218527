"""Deletes in a lane: what is deleted, as readers see it, and how a delete
request becomes journal records.

Readers see a lane's deletions as the union of its live deletion vector
records and its pending delete requests (requests.py). They must read the
requests *before* loading the snapshot: the writer removes a request only
after its records are durable, so a reader then sees it in one of the two
(or both: deletions are idempotent), never in neither.
"""
from __future__ import annotations

from ..format.constants import DELETE_REQUEST as FIELDS, LANE_REQUEST, REQUEST_KINDS
from .deletions import DELETION_VECTOR, Deletions, encode_vector
from .page_records import paged_record_ids
from .requests import RequestError, pending

DELETE = REQUEST_KINDS.DELETE


def prepared_record_ids(snapshot) -> set:
    return {record_id for tx in snapshot.prepared() for record_id in tx.record_ids}


def rows_elsewhere(snapshot) -> set:
    """Ids of the records whose rows are visible besides the lane's live records:
    prepared transactions (one the commit log committed is visible before its
    COMMIT record is written) and paged records (page_records.py: they live in
    page files, whose reads apply the lane's deletion vectors by record id and
    original position)."""
    return prepared_record_ids(snapshot) | paged_record_ids(snapshot)


def _is_u(value, bits: int) -> bool:
    return type(value) is int and 0 <= value < 1 << bits


def delete_records(request: dict, where: str) -> dict:
    """{record id: None (the whole record) | [original positions]} of a delete
    request (EVENTS.md, "Lane requests"): each name 1-20 ASCII digits (leading
    zeros allowed) of a value below 2^64, no two names of one record id ("7"
    and "007"), each value null or a list of integers 0..2^32-1; ``why``
    absent or a string. RequestError (*damaged*) naming the request otherwise:
    nothing of it is applied or carried out."""
    records = request.get(FIELDS.RECORDS)
    if type(records) is dict and type(request.get(FIELDS.WHY, "")) is str:
        parsed = {}
        for key, rows in records.items():
            if not (key.isascii() and key.isdigit() and len(key) <= 20 and _is_u(int(key), 64)):
                break
            if rows is not None and not (type(rows) is list and all(_is_u(p, 32) for p in rows)):
                break
            if int(key) in parsed:
                raise RequestError(f"delete request {where} is damaged: its \"records\" name "
                                   f"record {int(key)} twice; remove it and submit the delete "
                                   f"again")
            parsed[int(key)] = rows
        else:
            return parsed
    raise RequestError(f"delete request {where} is damaged: it must hold \"records\": "
                       f"{{\"<record id>\": null or [row positions, each 0 to 2^32 - 1]}} "
                       f"and at most a string \"why\"; remove it and submit the delete again")


def pending_deletions(lane: str) -> Deletions:
    """What the lane's pending delete requests delete (read before a snapshot)."""
    deletions = Deletions()
    for path, request in pending(lane):
        if request[LANE_REQUEST.KIND] == DELETE:
            for record_id, rows in delete_records(request, path).items():
                deletions.add(record_id, rows)
    return deletions


def lane_deletions(snapshot, pending_now: Deletions | None = None) -> Deletions:
    """The deleted rows of a lane: its live deletion vectors plus ``pending_now``."""
    deletions = Deletions()
    for record in snapshot.records():
        if record.user_type == DELETION_VECTOR:
            deletions.add_vector(record.body, f"record {record.record_id} of lane "
                                              f"{getattr(snapshot, 'directory', '?')}")
    if pending_now:
        deletions.merge(pending_now)
    return deletions


def carry_out_delete(journal, request: dict) -> None:
    """A delete request as records (the caller makes them durable): DELETE for
    a live record deleted whole, a deletion vector for rows of a live record or
    for rows visible elsewhere (``rows_elsewhere``). Rows already deleted, and
    records gone, get nothing: carrying a request out again writes nothing."""
    current = lane_deletions(journal)
    elsewhere = None
    for record_id, rows in delete_records(request, "being carried out").items():
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
