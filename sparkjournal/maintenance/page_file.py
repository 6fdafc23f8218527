"""Writing one page file: a lane's oldest visible events as plain Parquet.

The rows (lane_scan's events schema plus its metadata columns, in record id
and row order) are serialized in memory, then published whole under
``<lane>/pages/page-<first record id>-<random>.parquet``: written as ``.tmp``,
fsynced, renamed, the folder fsynced (files_io.write_file_atomically). Parquet
page checksums are written, and the CRC-32C of the whole file goes into its
PAGE record (events/page_records.py).

Crash behaviour: a file written here is invisible until a PAGE record names
it. Killed before the rename, a ``.tmp`` is left; after it, a complete file no
record names. Both are orphans the next paging run removes (paging.py).
"""
from __future__ import annotations

import os
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..faults import crash_point
from ..format.codec import CODEC
from ..format.constants import METADATA_COLUMNS
from ..io.files_io import fsync_dir, write_file_atomically
from ..io.io_rate import UNCAPPED, IoRate
from ..events.page_records import PAGES, PageRef

ROW_GROUP_ROWS = 128 * 1024
# A column's dictionary stops growing here and the rest of its row group is
# written plain: a column of few values (keys, batch ids, constant strings)
# keeps its dictionary, a column of distinct values (ids, times) does not
# make every reader decode a megabyte of dictionary per row group first.
DICTIONARY_PAGE_BYTES = 64 * 1024


def write_page(lane: str, table: pa.Table, record_ids: list[int], rate: IoRate = UNCAPPED) -> PageRef:
    """Publishes ``table`` (the rows of ``record_ids``, ascending) as a page
    file of ``lane``, its writes paced by ``rate`` (maintenanceBytesPerSecond);
    returns its reference, for its PAGE record."""
    folder = os.path.join(lane, PAGES)
    if not os.path.isdir(folder):
        os.makedirs(folder, mode=0o750, exist_ok=True)
        fsync_dir(lane)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=ROW_GROUP_ROWS, write_page_checksum=True,
                   write_statistics=True, dictionary_pagesize_limit=DICTIONARY_PAGE_BYTES)
    data = sink.getvalue()
    name = f"page-{record_ids[0]:020d}-{uuid.uuid4().hex[:8]}.parquet"
    write_file_atomically(os.path.join(folder, name), data, rate=rate,
                          written=lambda: crash_point("page:file-written"))
    crash_point("page:file-synced")
    return PageRef(name, data.size, CODEC.crc32c(memoryview(data)), table.num_rows,
                   tuple(record_ids), _range(table, METADATA_COLUMNS.BATCH_ID),
                   _range(table, METADATA_COLUMNS.COMMIT_TIME))


def _range(table: pa.Table, column: str) -> tuple[int, int]:
    """(lowest, highest) of a metadata column as integers (times in us); -1s if unknown."""
    values = table.column(column)
    if pa.types.is_timestamp(values.type):
        values = values.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64())
    bounds = pc.min_max(values)
    low, high = bounds["min"].as_py(), bounds["max"].as_py()
    if low is None or table.column(column).null_count:
        return (-1, -1)
    return (int(low), int(high))
