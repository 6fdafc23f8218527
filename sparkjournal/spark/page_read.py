"""The paged part of the locality-aware read: page files through Spark's own
Parquet reader (column pruning, vectorised decoding, filter pushdown on the
page's statistics), unioned before the journal tails that ``mapInArrow`` reads.

The driver plans it: for every lane it reads the lane's pending deletes and
then a snapshot (the order lane_deletes.py requires), takes the live PAGE
records (events/page_records.py), leaves out pages the read's predicate rules
out by their ranges (page_scan.wanted), checks each page file it keeps
(page_scan.check_page: size, and the footer against the PAGE record and the
journal's events columns; PageFileError names a damaged one) and remembers
the lane's deletions of paged rows. The footer is checked here, before Spark
reads the file, because Spark's Parquet reader matches columns by name and
reads a column the file lacks (a renamed ``_row`` or events column) as
nulls, and cannot be asked to refuse it; the driver sees every page file
(the limit below), and a page file is never rewritten in place (paging
publishes by rename and only removes), so what was checked is what the
executors read. Each lane's pages become one ``spark.read.parquet`` of exactly
those files with the journal's schema (columns a page predates read as
nulls), filtered by the read's starting point (exact, as the tail's pruning
is) and by its deletions (broadcast anti joins: whole records on
``_record_id``, rows on ``(_record_id, _row)``); record ids are per lane, so each lane is
filtered on its own before the union.

The lane tasks skip exactly the pages planned here (LaneSlice.pages_elsewhere)
and read any page committed after the plan themselves, so a paging that runs
between the plan and the tasks loses no row and doubles none. A lane that held
nothing but pages when planned (no events record, no prepared transaction)
gets no tail task: the read is of the journal as planned.

Limit: page files are read by path (``file://``) from whichever executor
Spark picks, so every executor must see every root (one machine,
local-cluster, a shared mount), as for ``spark.read.format("sparkjournal")``.
"""
from __future__ import annotations

import dataclasses
import os

import pyarrow as pa

from ..events.event_records import EVENTS
from ..events.lane_deletes import lane_deletions, pending_deletions
from ..events.page_records import PAGES, live_pages
from ..events.page_scan import check_page, wanted
from ..events.pruning import Predicate
from ..events.read_columns import RECORD_METADATA
from ..format.constants import METADATA_COLUMNS as COLUMNS
from ..journal.journal import Journal


@dataclasses.dataclass
class LanePages:
    lane: str
    names: list                       # page file names, oldest records first
    paths: list
    whole: list                       # record ids of paged records deleted whole
    rows: list                        # (record id, original position) of deleted paged rows
    tail_empty: bool = False          # the lane held nothing but pages when planned


def plan_pages(lanes, predicate: Predicate, journal_options: dict,
               events_schema: pa.Schema) -> dict[str, LanePages]:
    """{lane: its pages to read natively} for the lanes (reader.LanePartition)
    that have any; ``events_schema``: the journal's. Raises PageFileError for a
    damaged page file (page_scan.check_page) among them."""
    planned = {}
    for part in lanes:
        if not os.path.isdir(os.path.join(part.lane, PAGES)):
            continue                              # never paged: no load here
        deleted_by_requests = pending_deletions(part.lane)
        with Journal.read(part.lane, **journal_options) as snapshot:
            constants = {COLUMNS.HOST: part.slice.host, COLUMNS.LANE: os.path.basename(part.lane)}
            pages = [ref for ref in live_pages(snapshot)
                     if wanted(ref, 0, 1 << 63, predicate, constants)]
            if not pages:
                continue
            for ref in pages:                     # while the snapshot holds the file-set lock
                check_page(part.lane, ref, events_schema.names)
            deletions = lane_deletions(snapshot, deleted_by_requests)
            tail_empty = not snapshot.prepared() and not any(
                record.user_type == EVENTS for record in snapshot.records())
        paged = {record_id for ref in pages for record_id in ref.record_ids}
        whole, rows = [], []
        for record_id in sorted(paged):
            if record_id in deletions:
                deleted = deletions.rows_of(record_id)
                if deleted is None:
                    whole.append(record_id)
                else:
                    rows += [(record_id, position) for position in sorted(deleted)]
        planned[part.lane] = LanePages(part.lane, [ref.name for ref in pages],
                                       ["file://" + os.path.abspath(ref.path(part.lane))
                                        for ref in pages], whole, rows, tail_empty)
    return planned


def paged_frame(spark, planned: dict[str, LanePages], schema: pa.Schema, predicate: Predicate):
    """One DataFrame of every planned lane's paged rows, in the columns of
    ``schema`` (events + metadata); None if nothing is planned."""
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import from_arrow_schema
    spark_schema = from_arrow_schema(schema)
    frames = []
    for pages in planned.values():
        frame = spark.read.schema(spark_schema).parquet(*pages.paths)
        for condition in _conditions(predicate):
            frame = frame.where(condition)
        if pages.whole:
            whole = spark.createDataFrame([(i,) for i in pages.whole], "_record_id long")
            frame = frame.join(F.broadcast(whole), [COLUMNS.RECORD_ID], "left_anti")
        if pages.rows:
            deleted = spark.createDataFrame(pages.rows, "_record_id long, _row int")
            frame = frame.join(F.broadcast(deleted), [COLUMNS.RECORD_ID, COLUMNS.ROW], "left_anti")
        frames.append(frame.select(*schema.names))
    if not frames:
        return None
    union = frames[0]
    for frame in frames[1:]:
        union = union.union(frame)
    return union


def _conditions(predicate: Predicate):
    """The predicate's comparisons on metadata columns as Spark conditions (the
    read's starting point: exact, as the tail's record pruning is)."""
    from pyspark.sql import functions as F
    for comparison in predicate.comparisons:
        if comparison.column not in RECORD_METADATA:
            continue
        column = F.col(comparison.column)
        if comparison.op == "in":
            yield column.isin(list(comparison.value))
        else:
            value = F.lit(comparison.value)
            yield {"=": column == value, "<": column < value, "<=": column <= value,
                   ">": column > value, ">=": column >= value}[comparison.op]
