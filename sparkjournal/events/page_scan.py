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
it names is removed meanwhile, even one dropped since). Before any row is
read, ``check_page_footer`` holds the file to EVENTS.md's reader requirements:
a size or footer that disagrees with the PAGE record or the journal's events
columns is damage and fails the read naming the file (PageFileError), so no
damaged footer makes a reader leave rows out or read a column as nulls in
silence. Parquet's page checksums, written by paging, are verified on the way.

``check_page_file`` (sparkjournal verify) compares a page file with its PAGE
record; ``rows_left`` tells whether any of a page's rows is still visible
(maintenance/page_drop.py drops a page with none).
"""
from __future__ import annotations

import collections
import os

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq

from ..errors import SparkJournalError
from ..format.codec import CODEC
from ..format.constants import METADATA_COLUMNS as COLUMNS
from .page_records import PageRef
from .pruning import Predicate
from .read_columns import METADATA

ROWS_PER_BATCH = 64 * 1024


class PageFileError(SparkJournalError):
    """A page file a live PAGE record names is missing or changed."""


# The metadata columns a page file must hold with exactly these types
# (EVENTS.md, "PAGE records and page files"); _host and _lane may be there or
# not: readers restate them from the lane read.
_RESTATED = (COLUMNS.HOST, COLUMNS.LANE)
PAGE_OWN = pa.schema([field for field in METADATA if field.name not in _RESTATED])
# Their types as the Parquet schema states them, the facts Spark's reader (and
# the JVM's check, PageBatches.checkFooter) sees too: {type: (physical type,
# the logical types (to_json) that read as it)}. pyarrow's own copy of the
# Arrow schema in the footer (ARROW:schema) is not the spec's: Spark ignores it.
_PARQUET_TYPES = {
    pa.int64(): ("INT64", ('{"Type":"None"}', '{"Type":"Int","bitWidth":64,"isSigned":true}')),
    pa.int32(): ("INT32", ('{"Type":"None"}', '{"Type":"Int","bitWidth":32,"isSigned":true}')),
    pa.timestamp("us", tz="UTC"): ("INT64", ('{"Type":"Timestamp","isAdjustedToUTC":true,'
                                             '"timeUnit":"microseconds"',)),
}

def footer_problems(path: str, ref: PageRef, events_columns=None) -> list[str]:
    """What EVENTS.md calls damage in the footer of the page file at ``path``
    against its PAGE record ``ref``, from the Parquet metadata alone (no data
    is read): a footer that does not decode (column names not UTF-8
    included); a row count (the footer's, or its row groups' sum) other than
    the record's rows; a column named twice; one of ``_batch_id``,
    ``_commit_time``, ``_record_id``, ``_row`` missing or not a top-level
    Parquet column of PAGE_OWN's type (_PARQUET_TYPES); columns other than
    those and ``_host``/``_lane`` that are not, by name and in order, a prefix of
    ``events_columns`` (the journal's events column names; None: not
    checked, for a caller that does not know the journal). Empty when the
    footer is as paging wrote it."""
    try:
        with pq.ParquetFile(path) as parquet:
            metadata = parquet.metadata
            names = list(parquet.schema_arrow.names)        # top level, named as in Parquet
            leaves = {column.path: column for column in
                      (parquet.schema.column(i) for i in range(len(parquet.schema)))}
    except UnicodeDecodeError as error:
        return [f"it does not decode as Parquet: its footer names a column in bytes that are "
                f"not UTF-8 ({error})"]
    except (pa.ArrowException, OSError) as error:
        return [f"its Parquet footer does not read ({error}): it does not decode as Parquet"]
    problems = []
    grouped = sum(metadata.row_group(i).num_rows for i in range(metadata.num_row_groups))
    if metadata.num_rows != ref.rows or grouped != ref.rows:
        problems.append(f"its Parquet footer counts {metadata.num_rows} rows ({grouped} in its "
                        f"row groups), its PAGE record says {ref.rows}")
    twice = sorted(name for name, count in collections.Counter(names).items() if count > 1)
    if twice:
        problems.append(f"its footer names the column(s) {', '.join(twice)} more than once")
    for field in PAGE_OWN:
        column = leaves.get(field.name)
        if field.name not in names:
            problems.append(f"it has no {field.name} column")
        elif not _own_type(column, field.type):
            stated = "a group" if column is None else (
                f"{column.physical_type} {column.logical_type.to_json()}"
                + (" repeated" if column.max_repetition_level else ""))
            problems.append(f"its {field.name} column is {stated}, not {field.type}")
    if events_columns is not None:
        events_columns = list(events_columns)
        others = [name for name in names if name not in PAGE_OWN.names and name not in _RESTATED]
        if others != events_columns[:len(others)]:
            problems.append(f"its events columns ({', '.join(others)}) are not, in order, the "
                            f"first of the journal's ({', '.join(events_columns)})")
    return problems


def _own_type(column, arrow_type: pa.DataType) -> bool:
    """Whether a Parquet leaf column (None: the name is a group) is a plain,
    not repeated column of the type that reads as ``arrow_type``."""
    if column is None or column.max_repetition_level:
        return False
    physical, logical = _PARQUET_TYPES[arrow_type]
    stated = column.logical_type.to_json()
    return column.physical_type == physical and any(
        stated == each or not each.endswith("}") and stated.startswith(each + ",") for each in logical)


def check_page_footer(lane: str, ref: PageRef, events_columns=None) -> None:
    """Raises PageFileError (*damaged*, EVENTS.md) naming the page file and
    each disagreement footer_problems finds between its footer and its PAGE
    record ``ref`` or the journal's ``events_columns``; returns when none.
    Called before any row of a page file is read (read_page, rows_left,
    record_sizes, visible_events.read_table, page_read.plan_pages)."""
    path = ref.path(lane)
    problems = footer_problems(path, ref, events_columns)
    if problems:
        raise PageFileError(f"lane {lane}: page file {path} is damaged: {'; '.join(problems)}; "
                            f"restore it from a backup (its records were moved into it)")


def _missing(lane: str, path: str) -> PageFileError:
    return PageFileError(f"lane {lane}: page file {path}, named by a live PAGE record, is "
                         f"missing; restore it from a backup (its records were moved into it)")


def _changed(lane: str, path: str, problems: list[str]) -> PageFileError:
    return PageFileError(f"lane {lane}: page file {path}: {'; '.join(problems)}: it was "
                         f"changed after paging; restore it from a backup")


def check_page_size(lane: str, ref: PageRef) -> None:
    """Raises PageFileError when the page file is missing or its size is not
    its PAGE record's."""
    path = ref.path(lane)
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        raise _missing(lane, path) from None
    if size != ref.size:
        raise _changed(lane, path, [f"it holds {size} bytes, its PAGE record says {ref.size}"])


def _byte_problems(path: str, ref: PageRef) -> list[str]:
    """How the page file's size and CRC-32C differ from its PAGE record's
    (one read of the file); FileNotFoundError where it is missing."""
    size, crc = file_crc(path)
    problems = []
    if size != ref.size:
        problems.append(f"it holds {size} bytes, its PAGE record says {ref.size}")
    if crc != ref.crc32c:
        problems.append(f"its CRC-32C is {crc:#010x}, its PAGE record says {ref.crc32c:#010x}")
    return problems


def check_page_bytes(lane: str, ref: PageRef) -> None:
    """Raises PageFileError when the page file is missing, or its size or
    CRC-32C is not its PAGE record's. A reader checks it before Parquet
    decodes a byte of the file (EVENTS.md): decoders then only read bytes
    the PAGE record - inside a CRC-checked journal record - vouches for,
    never damage or tampering that could make them fail with their own
    errors, or loop."""
    path = ref.path(lane)
    try:
        problems = _byte_problems(path, ref)
    except FileNotFoundError:
        raise _missing(lane, path) from None
    if problems:
        raise _changed(lane, path, problems)


def check_page(lane: str, ref: PageRef, events_columns=None) -> None:
    """check_page_size, then check_page_footer: what a reader checks of a page
    file before reading its rows."""
    check_page_size(lane, ref)
    check_page_footer(lane, ref, events_columns)


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
    batches of ``schema`` (the journal's events schema + metadata columns,
    lane_scan). Raises PageFileError (*damaged*) for a page file that is
    missing, of another size or CRC-32C than its PAGE record's, whose footer disagrees
    with the record or the journal's events columns (check_page_footer), or
    that does not decode as Parquet."""
    path = ref.path(lane)
    check_page_bytes(lane, ref)
    check_page_footer(lane, ref, [name for name in schema.names if name not in METADATA.names])
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
    try:
        table = conform_page(table, schema, constants or {})
    except pa.ArrowException as error:      # pyarrow's ARROW:schema copy read a column otherwise
        raise PageFileError(f"lane {lane}: page file {path} does not decode as Parquet: a column "
                            f"does not read as the journal's type ({error}); restore it from a "
                            f"backup") from error
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
    size, CRC-32C of the whole file, and its Parquet footer (footer_problems:
    row counts, the metadata columns; not the prefix rule, which needs the
    journal's events columns; the metadata only, not the data); empty when
    it is as paged."""
    path = ref.path(lane)
    try:
        return _byte_problems(path, ref) + footer_problems(path, ref)
    except FileNotFoundError:
        return ["it is missing"]


def rows_left(lane: str, ref: PageRef, deletions) -> int:
    """How many of the page's rows ``deletions`` leave visible: none when each
    of its records is deleted whole (the file is not opened), else counted from
    its ``_record_id`` and ``_row`` columns. Raises PageFileError when the file
    must be read and is missing or not as paged (check_page, without the
    prefix rule: the journal's events columns are not read here)."""
    ids = ref.record_ids
    if all(deletions.whole(record_id) for record_id in ids):
        return 0
    if not any(record_id in deletions for record_id in ids):
        return ref.rows
    check_page(lane, ref)
    table = pq.read_table(ref.path(lane), columns=[COLUMNS.RECORD_ID, COLUMNS.ROW],
                          page_checksum_verification=True)
    return deletions.filter_rows(table).num_rows


def record_sizes(lane: str, ref: PageRef, first_id: int, end_id: int) -> list[tuple[int, int, int]]:
    """(record id, rows, estimated bytes) of the page's records in [first_id,
    end_id), from its ``_record_id`` column alone (streaming read limits).
    Raises PageFileError for a page file check_page refuses (without the
    prefix rule)."""
    check_page(lane, ref)
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
