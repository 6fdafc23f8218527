"""The events case of the golden lane corpus (generate.py): a lane of EVENTS
records landed as the Spark sink lands them, then paged once by the real
pager, so that a live PAGE record names a page file in ``pages/``.

Its records (Arrow bodies, the PAGE record's body) are taken from the Python
snapshot of the lane as paged, not restated; the page facts from the PAGE
record, and its rows from the Parquet file read by pyarrow."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq

from sparkjournal import Journal
from sparkjournal.config import load_config
from sparkjournal.events.commit_log import CommitLog, default_log_uri
from sparkjournal.events.node import node_id
from sparkjournal.events.page_records import live_page_records
from sparkjournal.maintenance.paging import page_lane
from sparkjournal.tools.bench.lanes import land_batch

OPTIONS = {"fileSize": "32k", "bufferSize": "8k", "minFiles": 2, "journalType": "NIO",
           "pageSizeBytes": "12k"}
FIRST_ROWS = 3


def page_rows(path: str) -> dict:
    """A page file's rows in a neutral form: its columns, the SHA-256 of the
    rows as canonical JSON (one list per row, ``_commit_time`` as microseconds),
    and the first rows."""
    table = pq.read_table(path)
    columns = table.column_names
    rows = [[_neutral(value) for value in row] for row in zip(*(table.column(c).to_pylist()
                                                               for c in columns))]
    canonical = json.dumps(rows, separators=(",", ":")).encode()
    return {"columns": columns, "rows_sha256": hashlib.sha256(canonical).hexdigest(),
            "first_rows": rows[:FIRST_ROWS]}


def _neutral(value):
    if hasattr(value, "timestamp"):               # a datetime: microseconds since the epoch
        import datetime
        epoch = datetime.datetime(1970, 1, 1, tzinfo=value.tzinfo)
        return (value - epoch) // datetime.timedelta(microseconds=1)
    return value


def pages_case(lane):
    """A lane of events paged once: a live PAGE record names its page file,
    whose rows are the paged records' events; the records it replaced are
    deleted in the same transaction."""
    from generate import Model
    root = tempfile.mkdtemp()
    try:
        node, log_uri = node_id(root), default_log_uri(root)
        log = CommitLog(log_uri)
        source = os.path.join(root, "lane-000")
        with Journal.open(source, **OPTIONS) as journal:
            for batch in range(3):
                start = batch * 300
                table = pa.table({"id": pa.array(range(start, start + 300), pa.int64()),
                                  "payload": [f"p{i % 7}" * 5 for i in range(start, start + 300)]})
                land_batch(journal, log, "q", batch, table, 100, sync=True)
        report = page_lane(source, node, log_uri, load_config(OPTIONS), force=True)
        assert report.paged, report
        shutil.rmtree(lane)
        shutil.copytree(source, lane)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    model = Model()
    with Journal.read(lane) as snap:
        for record in snap.records():
            model.live[record.record_id] = (record.user_type, bytes(record.body), record.large)
        model.max_record_id, model.max_tx_id = snap.max_record_id, snap._state.max_tx_id
        pages = []
        for record_id, ref in live_page_records(snap):
            pages.append({"record_id": record_id, "name": ref.name, "size": ref.size,
                          "crc32c": ref.crc32c, "rows": ref.rows,
                          "record_ids": list(ref.record_ids),
                          **page_rows(os.path.join(lane, "pages", ref.name))})
    assert pages
    return model, {"pages": pages}


# --- the events case extended: deletions, a pending request, damaged pages ----------------------
DELETION_VECTOR, PAGE = 2, 3
VISIBLE_COLUMNS = ["id", "payload", "_batch_id", "_record_id", "_row"]


def vector(target: int, positions) -> bytes:
    """A deletion vector's body (EVENTS.md): ``positions`` None deletes every row."""
    import struct
    if positions is None:
        return b"SJDV" + struct.pack("<BBHQI", 1, 1, 0, target, 0)
    return b"SJDV" + struct.pack("<BBHQI", 1, 0, 0, target, len(positions)) + \
        struct.pack(f"<{len(positions)}I", *positions)


def visible_rows(lane: str, live: dict, pages: list, deleted: dict) -> dict:
    """The visible events, as EVENTS.md states them, from the bytes written:
    the rows of each page file and of each live EVENTS record (original
    position = index, no ``__sj_row`` here), less ``deleted`` ({record id:
    positions or None}); in ``VISIBLE_COLUMNS``, ordered by (_record_id, _row)."""
    import pyarrow.ipc as ipc

    def gone(record_id, row):
        return record_id in deleted and (deleted[record_id] is None or row in deleted[record_id])

    rows = []
    for page in pages:
        table = pq.read_table(os.path.join(lane, "pages", page["name"]))
        for row in zip(*(table.column(c).to_pylist() for c in VISIBLE_COLUMNS)):
            if not gone(row[3], row[4]):
                rows.append(list(row))
    for record_id, (user_type, raw, _large) in live.items():
        if user_type != 1:
            continue
        batch = ipc.open_stream(raw).read_next_batch()
        batch_id = int(batch.schema.metadata[b"sparkjournal.batch"])
        for position, row in enumerate(zip(*(batch.column(c).to_pylist() for c in ("id", "payload")))):
            if not gone(record_id, position):
                rows.append([*row, batch_id, record_id, position])
    rows.sort(key=lambda row: (row[3], row[4]))
    canonical = json.dumps(rows, separators=(",", ":")).encode()
    return {"columns": VISIBLE_COLUMNS, "rows": len(rows),
            "rows_sha256": hashlib.sha256(canonical).hexdigest(), "first_rows": rows[:FIRST_ROWS]}


def pages_deleted(lane):
    """The events case with deletions: deletion vectors on a live EVENTS
    record, on a paged record and on a whole paged record (ALL), and a pending
    delete request (rows of a live record, a row of a paged record, a whole
    live record): a read's deleted rows are the union of vectors and pending
    requests, applied to records and pages alike by original position."""
    from sparkjournal.events.requests import submit
    model, extra = pages_case(lane)
    pages = extra["pages"]
    events = [rid for rid, (user_type, _raw, _l) in model.live.items() if user_type == 1]
    paged = pages[0]["record_ids"]
    vectors = [(events[1], [0, 5, 99]), (paged[1], [1, 2, 3]), (paged[-1], None)]
    with Journal.open(lane, **OPTIONS) as journal:
        for target, positions in vectors:
            model.max_record_id += 1
            raw = vector(target, positions)
            journal.append_add(model.max_record_id, raw, user_type=DELETION_VECTOR, sync=True)
            model.live[model.max_record_id] = (DELETION_VECTOR, raw, False)
    requested = {str(events[2]): [11, 10], str(paged[2]): [0], str(events[3]): None}
    submit(lane, "delete", {"records": requested, "why": "golden corpus"})
    deleted: dict = {}
    for target, positions in vectors + [(int(k), v) for k, v in requested.items()]:
        if positions is None or deleted.get(target, ()) is None:
            deleted[target] = None
        else:
            deleted[target] = sorted(set(deleted.get(target, [])) | set(positions))
    events_view = {"outcome": "ok",
                   "deleted": {str(k): deleted[k] for k in sorted(deleted)},
                   **visible_rows(lane, model.live, pages, deleted)}
    return model, {"pages": pages, "events": events_view}


def page_record_damaged(lane):
    """The events case with its PAGE record's body announcing one record id
    more than it holds (its length is not 80 + n + 8m), the record's CRC
    right: the lane loads, reading its events fails: damaged (PAGE record)."""
    from generate import patch, read_at, reseal, with_data
    model, extra = pages_case(lane)
    record_id = extra["pages"][0]["record_id"]
    for path, s in with_data(lane):
        for record in s["records"]:
            if record[3] == record_id:
                at = record[5] + 40
                count = int.from_bytes(read_at(path, at + 20, 4), "little")
                patch(path, at + 20, (count + 1).to_bytes(4, "little"))
                reseal(path, record[5])
                user_type, _raw, large = model.live[record_id]
                model.live[record_id] = (user_type, read_at(path, at, record[6]), large)
    return model, {"events": {"outcome": "damaged",
                              "error": {"kind": "damaged", "what": "PAGE record",
                                        "record_id": record_id}}}


def page_wrong_size(lane):
    """The events case with its page file one byte longer than its PAGE
    record states: the lane loads, reading its events fails: damaged (page
    file), naming the file."""
    model, extra = pages_case(lane)
    name = extra["pages"][0]["name"]
    with open(os.path.join(lane, "pages", name), "ab") as handle:
        handle.write(b"\0")
    return model, {"events": {"outcome": "damaged",
                              "error": {"kind": "damaged", "what": "page file",
                                        "file": "pages/" + name}}}
