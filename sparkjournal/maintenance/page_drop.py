"""Dropping a page whose events are all deleted: its PAGE record dies, then its file goes.

A page file (paging.py) holds its events until they are deleted; deletes and
retention reach paged rows as deletion vectors (events/lane_deletes.py), so a
page whose every row is deleted is invisible but still takes its bytes. Paging's
maintenance pass (paging.page_lane, run by ``sparkjournal page`` and
``sparkjournal compact`` and their jobs) drops it in two steps:

1. under the lane's maintenance lock, the pager finds the live pages none of
   whose rows is left (the lane's deletion vectors and pending delete
   requests, read before the snapshot as lane_deletes.py requires; a page
   whose records are all deleted whole is decided without opening its file)
   and submits a ``drop-page`` request ``{"kind": "drop-page", "page": name}``
   (events/requests.py: maintenance never appends to a lane another process
   holds). paging.py submits it and, if the lane is free, carries it out at
   once (lane_requests.apply_now); else the lane's holder does at its next task;
2. carrying it out (``carry_out_drop``, by whoever holds the lane) checks again
   that the page is live and none of its rows is left, then writes ONE
   transaction, committed and synced: a DELETE of the PAGE record and a DELETE
   of every live deletion vector targeting one of the page's records. Those
   vectors name rows that are nowhere once the page is dead (record ids are
   never handed out again, and a record's rows live in one place only), so
   they go with the page: none survives as garbage, and none can apply to
   anything else. A pending delete request naming those records then writes
   nothing (its records are neither live nor elsewhere).
3. The file, now an orphan, is removed by paging's orphan removal
   (paging.remove_orphans) right after, in the same pass, or by the next run:
   under the lane's exclusive file-set lock, so a reader whose snapshot still
   holds the page live (it holds the lock shared from its load until it closes)
   reads it to the end; if readers hold the lane past the wait, the file stays
   an orphan for the next run.

Crash behaviour: killed before the COMMIT is durable, the transaction is rolled
back at the lane's next open: the page is live, as are its vectors, and the
request (still pending) is carried out again or the next pass decides again.
Killed after the COMMIT (before the request is removed, or before the file is
removed), the page is dead for every reader that loads the lane afterwards; a
request carried out again finds no live PAGE record naming the page and does
nothing; the file is an orphan the next paging run removes. Reads before and
after are the same: the page's rows were all deleted.
"""
from __future__ import annotations

import logging

import pyarrow as pa

from ..config import JournalConfig
from ..events.deletions import DELETION_VECTOR, decode_vector
from ..events.lane_deletes import lane_deletions, pending_deletions
from ..events.page_records import live_page_records
from ..events.page_scan import PageFileError, rows_left
from ..events.requests import RequestError, pending, submit
from ..faults import crash_point
from ..format.constants import LANE_REQUEST, PAGE_REQUEST as FIELDS, REQUEST_KINDS
from ..journal.journal import Journal

log = logging.getLogger("sparkjournal.paging")
DROP_REQUEST = REQUEST_KINDS.DROP_PAGE


def deleted_pages(lane: str, pages, deletions) -> list:
    """Those of ``pages`` ((PAGE record id, page), live) with no row left under
    ``deletions``. A page whose file cannot be read to decide is kept (logged;
    ``sparkjournal verify`` names what is wrong with it)."""
    found = []
    for record_id, ref in pages:
        try:
            left = rows_left(lane, ref, deletions)
        except (PageFileError, pa.ArrowException, OSError) as error:
            log.warning("lane %s: page %s kept: cannot tell whether its rows are all deleted "
                        "(%s); run sparkjournal verify", lane, ref.name, error)
            continue
        if not left:
            found.append((record_id, ref))
    return found


def drop_candidates(lane: str, config: JournalConfig) -> list[str]:
    """Step 1's choice: names of the lane's live pages with no row left."""
    deleted_by_requests = pending_deletions(lane)           # before the snapshot
    with Journal.read(lane, config) as snapshot:
        deletions = lane_deletions(snapshot, deleted_by_requests)
        found = deleted_pages(lane, live_page_records(snapshot), deletions)
    return [ref.name for _record_id, ref in found]


def request_drops(lane: str, names: list[str]) -> None:
    """Step 1's requests: one per page, unless one is pending already."""
    requested = {request.get(FIELDS.PAGE) for _path, request in pending(lane)
                 if request[LANE_REQUEST.KIND] == DROP_REQUEST}
    for name in names:
        if name not in requested:
            submit(lane, DROP_REQUEST, {FIELDS.PAGE: name})


def carry_out_drop(journal, request: dict) -> None:
    """Step 2 (module doc), with the lane's writer; the caller removes the
    request once it returns. Idempotent: a page not live is left alone."""
    name = request.get(FIELDS.PAGE)
    if not isinstance(name, str):
        raise RequestError(f"a {DROP_REQUEST} request of lane {journal.directory} lacks the "
                           f"page's name; remove it and run paging again")
    found = [(record_id, ref) for record_id, ref in live_page_records(journal) if ref.name == name]
    if not found:
        return                                    # dropped before a crash, or never committed
    page_record, ref = found[0]
    deletions = lane_deletions(journal, pending_deletions(journal.directory))
    if not deleted_pages(journal.directory, found, deletions):
        log.warning("lane %s: page %s not dropped: some of its rows are not deleted (or its "
                    "file cannot be read to tell)", journal.directory, name)
        return
    targets, vectors = set(ref.record_ids), []
    for record in journal.records():
        if record.user_type == DELETION_VECTOR and decode_vector(
                record.body, f"record {record.record_id} of lane {journal.directory}")[0] in targets:
            vectors.append(record.record_id)
    tx = journal.next_tx_id()
    journal.append_delete_tx(tx, page_record)
    for vector in vectors:
        journal.append_delete_tx(tx, vector)
    crash_point("page-drop:before-commit")
    journal.commit(tx, sync=True)
    log.info("lane %s: page %s dropped (%d records, %d rows, all deleted; %d deletion vectors "
             "with it); its file goes with the next orphan removal", journal.directory, name,
             len(ref.record_ids), ref.rows, len(vectors))
    crash_point("page-drop:committed")


HANDLERS = {DROP_REQUEST: carry_out_drop}
