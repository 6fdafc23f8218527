"""Reading a lane's page files (page_records.py) as the lane scan's batches.

A page file is plain Parquet: the events schema at the time it was written,
then the metadata columns of lane_scan.METADATA, one row per visible event of
the records it replaced, in record id and row order. Its rows are exactly what
lane_scan.scan yielded for those records, so a read after paging equals the
read before. Here they are conformed to the reader's events schema (nulls for
columns the page predates), ``_host`` and ``_lane`` restated from the lane
read, and the lane's deletion vectors and pending deletes applied by
(``_record_id``, ``_row``) - deletes of paged events are vectors
(lane_deletes.rows_elsewhere).

Only pages named by live PAGE records of the caller's snapshot are read, while
the snapshot is open (it holds the lane's file-set lock shared, and page files
are removed only under the exclusive lock - maintenance/paging.py - so no page
it names is removed meanwhile, even one dropped since); a page file whose size
differs from its PAGE record's is damage and fails the read naming it.
Parquet's page checksums, written by paging, are verified on the way.

``check_page_file`` (sparkjournal verify) compares a page file with its PAGE
record; ``rows_left`` tells whether any of a page's rows is still visible
(maintenance/page_drop.py drops a page with none).
"""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from ..errors import SparkJournalError
from ..format.codec import CODEC
from ..format.constants import METADATA_COLUMNS as COLUMNS
from .page_records import PageRef
from .pruning import Predicate

ROWS_PER_BATCH = 64 * 1024


class PageFileError(SparkJournalError):
    """A page file a live PAGE record names is missing or changed."""


def page_ranges(ref: PageRef) -> dict:
    """{metadata column: (lowest, highest)} of a page, for pruning."""
    ranges = {COLUMNS.RECORD_ID: (ref.first_id, ref.last_id)}
    if ref.batch_range[0] >= 0:
        ranges[COLUMNS.BATCH_ID] = ref.batch_range
    if ref.time_range[0] >= 0:
        ranges[COLUMNS.COMMIT_TIME] = ref.time_range
    return ranges


def wanted(ref: PageRef, first_id: int, end_id: int, predicate: Predicate,
           constants: dict) -> bool:
    """Whether a read of record ids [first_id, end_id) with ``predicate`` needs the page."""
    if ref.last_id < first_id or ref.first_id >= end_id:
        return False
    return not predicate or predicate.may_match_ranges(page_ranges(ref), constants)


def read_page(lane: str, ref: PageRef, schema: pa.Schema, deletions, *, first_id: int = 0,
              end_id: int = 1 << 63, constants: dict | None = None):
    """Yields the page's visible rows with record ids in [first_id, end_id) as
    batches of ``schema`` (events schema + metadata columns, lane_scan).
    Raises PageFileError (*damaged*) for a page file that is missing, of
    another size than its PAGE record's, or that does not decode as Parquet."""
    path = ref.path(lane)
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise PageFileError(f"lane {lane}: page file {path}, named by a live PAGE record, "
                            f"is missing; restore it from a backup (its records were moved "
                            f"into it)") from None
    if size != ref.size:
        raise PageFileError(f"lane {lane}: page file {path} holds {size} bytes, its PAGE "
                            f"record says {ref.size}: it was changed after paging; restore "
                            f"it from a backup")
    filters = None
    if first_id > ref.first_id or end_id <= ref.last_id:
        filters = [(COLUMNS.RECORD_ID, ">=", first_id),
                   (COLUMNS.RECORD_ID, "<=", min(end_id - 1, ref.last_id))]
    try:
        table = pq.read_table(path, filters=filters, page_checksum_verification=True)
    except (pa.ArrowException, OSError) as error:       # Parquet damage, a page checksum mismatch
        raise PageFileError(f"lane {lane}: page file {path} does not decode as Parquet "
                            f"({error}); restore it from a backup") from error
    table = deletions.filter_rows(table) if deletions else table
    if not table.num_rows:
        return
    table = conform_page(table, schema, constants or {})
    yield from table.to_batches(max_chunksize=ROWS_PER_BATCH)


def file_crc(path: str) -> tuple[int, int]:
    """(size, CRC-32C) of a file as it is on disk."""
    crc = size = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            crc = CODEC.crc32c(chunk, crc)
            size += len(chunk)
    return size, crc


def check_page_file(lane: str, ref: PageRef) -> list[str]:
    """What differs between a page file and its live PAGE record: presence,
    size, CRC-32C of the whole file, and the row count in its Parquet footer
    (the metadata only, not the data); empty when it is as paged."""
    path = ref.path(lane)
    try:
        size, crc = file_crc(path)
    except FileNotFoundError:
        return ["it is missing"]
    problems = []
    if size != ref.size:
        problems.append(f"it holds {size} bytes, its PAGE record says {ref.size}")
    if crc != ref.crc32c:
        problems.append(f"its CRC-32C is {crc:#010x}, its PAGE record says {ref.crc32c:#010x}")
    try:
        rows = pq.ParquetFile(path).metadata.num_rows
    except (pa.ArrowException, OSError) as error:
        problems.append(f"its Parquet footer does not read ({error})")
    else:
        if rows != ref.rows:
            problems.append(f"its Parquet footer counts {rows} rows, its PAGE record says "
                            f"{ref.rows}")
    return problems


def rows_left(lane: str, ref: PageRef, deletions) -> int:
    """How many of the page's rows ``deletions`` leave visible: none when each
    of its records is deleted whole (the file is not opened), else counted from
    its ``_record_id`` and ``_row`` columns. Raises PageFileError when the file
    must be read and is missing or not as paged."""
    ids = ref.record_ids
    if all(deletions.whole(record_id) for record_id in ids):
        return 0
    if not any(record_id in deletions for record_id in ids):
        return ref.rows
    path = ref.path(lane)
    try:
        size = os.path.getsize(path)
        if size != ref.size:
            raise PageFileError(f"lane {lane}: page file {path} holds {size} bytes, its PAGE "
                                f"record says {ref.size}")
        table = pq.read_table(path, columns=[COLUMNS.RECORD_ID, COLUMNS.ROW],
                              page_checksum_verification=True)
    except FileNotFoundError:
        raise PageFileError(f"lane {lane}: page file {path}, named by a live PAGE record, "
                            f"is missing") from None
    return deletions.filter_rows(table).num_rows


def record_sizes(lane: str, ref: PageRef, first_id: int, end_id: int) -> list[tuple[int, int, int]]:
    """(record id, rows, estimated bytes) of the page's records in [first_id,
    end_id), from its ``_record_id`` column alone (streaming read limits)."""
    ids = pq.read_table(ref.path(lane), columns=[COLUMNS.RECORD_ID]).column(COLUMNS.RECORD_ID)
    counts = pa.compute.value_counts(ids).to_pylist() if len(ids) else []
    per_row = ref.size / max(ref.rows, 1)
    return sorted((c["values"], c["counts"], int(c["counts"] * per_row)) for c in counts
                  if first_id <= c["values"] < end_id)


def conform_page(table: pa.Table, schema: pa.Schema, constants: dict) -> pa.Table:
    """``table`` as exactly ``schema``: nulls for columns it lacks, casts where
    types differ, and ``constants`` {column: value} for every row."""
    columns = []
    for field in schema:
        if field.name in constants:
            columns.append(pa.chunked_array([pa.repeat(pa.scalar(constants[field.name], field.type),
                                                        table.num_rows)]))
            continue
        index = table.schema.get_field_index(field.name)
        if index < 0:
            columns.append(pa.chunked_array([pa.nulls(table.num_rows, field.type)]))
        else:
            column = table.column(index)
            columns.append(column if column.type == field.type else column.cast(field.type))
    return pa.Table.from_arrays(columns, schema=schema)
