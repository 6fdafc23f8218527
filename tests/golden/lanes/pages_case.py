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
    from generate import Model, body_view
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
