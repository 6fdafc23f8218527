"""The batch reader of the ``sparkjournal`` data source:

    spark.read.format("sparkjournal").load(path)

One input partition per lane (every node root of ``path`` visible from the
driver: one machine, local-cluster, a shared mount; sparkjournal.read is the
locality-aware read for separate machines). A driver that does not see every
lane holding committed events fails planning (driver_view.py). ``read`` yields Arrow record
batches straight from the lane's memory-mapped bodies (lane_scan.py).

Pushdown: with ``spark.sql.python.filterPushdown.enabled`` on, comparisons on
the metadata columns (``_batch_id``, ``_commit_time``, ``_host``, ``_lane``,
``_record_id``) and on event columns with stored min/max skip whole records
before their rows are touched (pruning.py); results are identical without it.

Columns: a user-specified schema (``.schema("key string, amount double")``)
is the columns ``read`` yields, any event and metadata columns in any order
(user_schema.py); a filter on a column outside it is Spark's analysis error.
"""
from __future__ import annotations

import sys

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from ..events.lane_scan import METADATA, LaneSlice, scan
from ..events.pruning import Predicate
from .pushdown import from_spark_filters
from .driver_view import driver_lanes

PUSHDOWN_PLANNER = ".data_source_pushdown_filters"      # pyspark.sql.worker's module
__all__ = ["METADATA", "JournalReader", "LanePartition", "reader_class"]


class LanePartition(InputPartition):
    """One lane's slice; picklable (plain values only)."""

    def __init__(self, part: LaneSlice):
        super().__init__(part.lane)
        self.slice = part

    @property
    def lane(self) -> str:
        return self.slice.lane

    @property
    def node(self) -> str | None:
        return self.slice.node

    @property
    def log_uri(self) -> str:
        return self.slice.log_uri


class JournalReader(DataSourceReader):
    def __init__(self, path: str, log_uri: str, events_schema: pa.Schema, journal_options: dict,
                 predicate: Predicate = Predicate(), skip_corrupt: bool = False,
                 columns: pa.Schema | None = None, allow_partial: bool = False):
        self.path, self.log_uri = path, log_uri
        self.allow_partial = allow_partial
        self.events_schema, self.columns = events_schema, columns     # columns None: all
        self.journal_options = journal_options
        self.predicate, self.skip_corrupt = predicate, skip_corrupt

    def partitions(self):
        return [LanePartition(LaneSlice(lane, node, self.log_uri, predicate=self.predicate,
                                        skip_corrupt=self.skip_corrupt))
                for lane, node in driver_lanes(self.path, self.log_uri, self.allow_partial,
                                               "spark.read.format('sparkjournal')")]

    def read(self, partition: LanePartition):
        yield from scan(partition.slice, self.events_schema, self.journal_options,
                        columns=self.columns)


class PushdownJournalReader(JournalReader):
    def pushFilters(self, filters):
        pushed, rest = from_spark_filters(filters)
        self.predicate = Predicate(self.predicate.comparisons + pushed.comparisons)
        return rest


def reader_class() -> type[JournalReader]:
    """PySpark's planner refuses a reader that implements ``pushFilters`` while
    ``spark.sql.python.filterPushdown.enabled`` is false, and does not tell
    ``DataSource.reader()`` which it is. With it on, Spark plans the read in
    its pushdown worker module; with it off, in the plain planner, where the
    setting is a local of the calling frame. Recognise the caller; where it
    cannot be recognised, no pushdown (the safe choice: the read works,
    unpruned)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").endswith(PUSHDOWN_PLANNER):
            return PushdownJournalReader
        if "enable_pushdown" in frame.f_locals:
            return PushdownJournalReader if frame.f_locals["enable_pushdown"] else JournalReader
        frame = frame.f_back
    return JournalReader
