"""Carrying out a ``page`` request: the transaction that makes a page visible.

Paging (paging.py) writes a page file, then asks the lane's writer (a lane
request, events/requests.py) to commit it; whoever holds the lane carries it
out: a Spark worker's lane writer at its next task, or maintenance itself
when the lane is free (lane_requests.apply_now). The request is
``{"kind": "page", "page": PageRef.as_request()}``.

Carrying it out re-validates first, since the lane may have changed since the
page was written: the page file must be as written (size and CRC-32C), and
every record it replaces must still be a live record of events. Then ONE
transaction: a DELETE for each replaced record and the PAGE record, committed
and synced. If anything changed (a record deleted whole meanwhile, a damaged
file), the page is abandoned: its file is removed (no record names it, so no
reader ever opened it) and the next paging run pages the records again.
Deletion vectors written meanwhile still apply to the page's rows.

Crash behaviour: killed before the COMMIT is durable, the transaction is
rolled back at the lane's next open and the request stays pending, so it is
carried out again; killed after the COMMIT but before the request is removed,
carrying it out again finds the page live and does nothing.
"""
from __future__ import annotations

import logging
import os

from ..events.event_records import EVENTS
from ..events.page_records import PAGE, PageRef, live_pages
from ..events.page_scan import file_crc
from ..faults import crash_point
from ..format.constants import PAGE_REQUEST as FIELDS, REQUEST_KINDS
from ..io.files_io import fsync_dir, remove_quietly

log = logging.getLogger("sparkjournal.paging")
PAGE_REQUEST = REQUEST_KINDS.PAGE


def carry_out_page(journal, request: dict) -> None:
    ref = PageRef.from_request(request.get(FIELDS.PAGE) or {})
    if any(page.name == ref.name for page in live_pages(journal)):
        return                                        # committed before a crash
    problem = stale(journal, ref)
    if problem is not None:
        log.warning("lane %s: page %s abandoned: %s; the next paging run pages these records "
                    "again", journal.directory, ref.name, problem)
        remove_quietly(ref.path(journal.directory))
        fsync_dir(os.path.dirname(ref.path(journal.directory)))
        return
    tx = journal.next_tx_id()
    for record_id in ref.record_ids:
        journal.append_delete_tx(tx, record_id)
    journal.append_add_tx(tx, journal.next_record_id(), ref.encode(), user_type=PAGE)
    crash_point("page:before-commit")
    journal.commit(tx, sync=True)
    crash_point("page:committed")


def stale(journal, ref: PageRef) -> str | None:
    """Why the page can no longer replace its records, or None if it can."""
    path = ref.path(journal.directory)
    try:
        size, crc = file_crc(path)
    except FileNotFoundError:
        return f"its file {path} is gone"
    if (size, crc) != (ref.size, ref.crc32c):
        return (f"its file {path} holds {size} bytes with CRC-32C {crc:#010x}, not the "
                f"{ref.size} bytes with {ref.crc32c:#010x} it was written with")
    for record_id in ref.record_ids:
        record = journal.get(record_id)
        if record is None or record.user_type != EVENTS:
            return f"record {record_id} is no longer a live record of events"
    return None


HANDLERS = {PAGE_REQUEST: carry_out_page}
