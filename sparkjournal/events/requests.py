"""Lane requests: what maintenance asks of a lane's one writer.

A lane has one writer, and on a running stream that is a Spark Python worker
holding the lane for as long as it lives. Maintenance (deletes, retention,
paging) therefore never appends to a lane itself unless the lane is free: it
writes a *request* into ``<lane>/requests/`` and whoever holds the lane next
carries it out as journal records - the lane writer at the start of its next
task, any writer when it opens the lane, or the maintenance process itself if
it can lock the lane (``apply_now``).

Kinds (``handlers`` maps each to the code that carries it out):

* ``delete`` - {"records": {"<record id>": null | [original positions]}}:
  DELETE for whole records, a deletion vector for rows (deletions.py).
  Readers apply pending delete requests at once, so a delete is visible as
  soon as its request is durable.
* ``page`` - a page file replaces records (maintenance/paging.py); visible
  only once carried out, as its own transaction.

A request is one JSON file ``requests/<ns since the epoch, 20 digits>-<random>.json``
written atomically (tmp, fsync, rename, folder fsync); carried out in name
order, then removed. Crash behaviour: a request carried out but not yet
removed is carried out again, so every handler is idempotent (deleting a record
that is gone, or rows already deleted, does nothing). Nothing read here is
evaluated or unpickled.
"""
from __future__ import annotations

import json
import logging
import os
import time
import uuid

from ..errors import FormatVersionError, SparkJournalError
from ..format import strict_json as sj
from ..format.constants import LANE_REQUEST as FIELDS, PATHS
from ..io.files_io import fsync_dir, remove_quietly, write_file_atomically
from ..io.modes import make_dirs
from ..journal.inside import check_inside

log = logging.getLogger("sparkjournal.requests")
REQUESTS = PATHS.REQUESTS
FORMAT = 1


class RequestError(SparkJournalError):
    """A lane request that cannot be read or carried out."""


def submit(lane: str, kind: str, payload: dict) -> str:
    """Writes a request durably; returns its path."""
    folder = check_inside(lane, REQUESTS, "the lane requests folder")
    make_dirs(folder)
    name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:12]}.json"
    path = os.path.join(folder, name)
    write_file_atomically(path, json.dumps({FIELDS.FORMAT: FORMAT, FIELDS.KIND: kind, **payload},
                                           sort_keys=True).encode())
    return path


def pending(lane: str) -> list[tuple[str, dict]]:
    """(path, request) of every request not carried out yet, oldest first."""
    folder = check_inside(lane, REQUESTS, "the lane requests folder")
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        path = os.path.join(folder, name)
        check_inside(lane, os.path.join(REQUESTS, name), "lane request")
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            continue                          # carried out since the listing
        found.append((path, parse(raw, path)))
    return found


def parse(raw: bytes, path: str) -> dict:
    """A request's fields, its envelope checked (JSON.md; ``format`` first,
    then ``kind`` a string): FormatVersionError for a newer format,
    RequestError for anything else no writer writes. Each kind's handler
    checks its own fields."""
    try:
        request = sj.loads(raw, "the request")
    except sj.JsonRefused as error:
        raise RequestError(f"lane request {path} is not valid JSON ({error}); it was written "
                           f"atomically, so it is damaged: remove it and run the maintenance "
                           f"job that wrote it again") from error
    found_format = sj.newer_format(request, FORMAT) if type(request) is dict else None
    if found_format is not None:
        raise FormatVersionError(path, found_format, FORMAT, "lane request")
    try:
        sj.format_of(sj.top_object(request, "the request"), FORMAT)
        sj.string(request, FIELDS.KIND)
    except sj.JsonRefused as error:
        raise RequestError(f"lane request {path} is not a format {FORMAT} request ({error}): "
                           f"remove it and run the maintenance job that wrote it "
                           f"again") from error
    return request


def carry_out(journal, handlers: dict) -> int:
    """Carries out the lane's pending requests with ``journal`` (the lane's
    writer): each through ``handlers[kind](journal, request)``, made durable,
    then removed. Returns how many. An unknown kind stays pending (a newer
    sparkjournal wrote it) and is logged."""
    journal.refresh()            # handlers look records up one by one: see a swap first
    done = 0
    for path, request in pending(journal.directory):
        handler = handlers.get(request[FIELDS.KIND])
        if handler is None:
            log.warning("lane %s: request %s of kind %r is unknown to this sparkjournal; "
                        "left pending", journal.directory, path, request[FIELDS.KIND])
            continue
        handler(journal, request)
        journal.flush()
        remove_quietly(path)
        done += 1
    if done:
        fsync_dir(os.path.join(journal.directory, REQUESTS))
    return done
