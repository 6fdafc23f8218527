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

# The worker module PySpark plans a read with when it pushes filters: the only
# caller of DataSourceReader.pushFilters.
PUSHDOWN_PLANNER = "pyspark.sql.worker.data_source_pushdown_filters"
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
    """The reader for the Python worker planning this read.

    PySpark plans a read in one of two worker modules, each a process of its
    own (a daemon per module, its argv naming it): with
    ``spark.sql.python.filterPushdown.enabled`` on and filters to push, in
    PUSHDOWN_PLANNER, which calls ``pushFilters``; otherwise in
    ``plan_data_source_read``, which never calls it and refuses a reader that
    implements it while the setting is off. ``DataSource.reader()`` is told
    neither (it gets the schema only; the setting reaches the worker's entry
    function and no further), so the reader follows the planner this process
    runs: the pushdown reader where PUSHDOWN_PLANNER is loaded, else the plain
    one. Where the module would be missed (run as ``__main__`` without the
    daemon), the plain reader reads the same rows, unpruned, and Spark applies
    every filter."""
    return PushdownJournalReader if PUSHDOWN_PLANNER in sys.modules else JournalReader
