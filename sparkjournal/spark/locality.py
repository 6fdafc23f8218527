"""The locality-aware read: every lane is read on the node that holds it.

    import sparkjournal
    df = sparkjournal.read(spark, "/var/lib/sparkjournal/events")   # a DataFrame

Same columns (or the ``columns=`` asked, read_columns.py) and the same visible
events as ``spark.read.format("sparkjournal").load(path)`` (each lane is read by the same
scan, lane_scan.py), but Python data source partitions cannot carry preferred
locations, so this builds the scan itself: the lanes are planned from the
commit log and a survey of the live executors (lane_plan.py: no lane the commit
log names is ever left out in silence), the driver makes a JVM RDD of one small
JSON lane description per partition, each with the lane's location preferences
(placement.py), and reads the lanes in ``mapInArrow`` over it. One partition per
lane, no shuffle, so each lane's task keeps its preferences.

Preferences are not guarantees. A task that runs on a node where the lane's root
does not carry the lane's NODE_ID raises WrongNodeError before reading anything:
Spark retries it (up to ``spark.task.maxFailures``), and the read never returns
another node's data or silently nothing. Jobs should set ``spark.locality.wait``
(e.g. ``30s``; Spark's default is 3s) so the scheduler waits for the right
executor instead of retrying elsewhere.

The driver needs no view of the roots: it can run on an edge machine, or on one
of the hosts. A root holding lanes without a NODE_ID cannot be placed or
checked, and is an error. Needs a classic SparkSession (py4j), not Spark Connect.
"""
from __future__ import annotations

import json
import logging

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema

from .connector import attach
from ..errors import SparkJournalError
from .datasource import JournalDataSource
from ..events.lane_scan import LaneSlice, WrongNodeError, scan
from ..events.read_columns import full_schema, named
from .page_read import paged_frame, plan_pages
from .lane_plan import LanePlan, plan_lanes
from .located_rdd import located_rdd
from ..events.pruning import Predicate

log = logging.getLogger("sparkjournal.locality")
LANE_COLUMN = "lane"              # the one column of the RDD of lane descriptions


__all__ = ["read", "located_read", "WrongNodeError"]


def read(spark, path: str, columns=None, **options):
    """The journal at ``path`` as a DataFrame, each lane read on its node; only
    ``columns`` (event and metadata column names, in that order; default all)
    if given, an unknown name failing with UnknownColumnError before any task.
    Options: the read options of the data source (``commitLog``,
    ``skipCorrupt``, ``startingBatchId``, ``startingTimestamp``) and journal options."""
    return located_read(spark, path, columns=columns, **options)[0]


def located_read(spark, path: str, *, native_pages: bool = True, columns=None,
                 **options) -> tuple[object, LanePlan]:
    """``read``, plus its plan (lane_plan.py: the lanes in partition order, and
    what a partial read left out). With ``native_pages`` (the default) and a
    cluster where every executor and the driver see every root, page files
    are read by Spark's Parquet reader (page_read.py) and their partitions
    come first; otherwise each lane's task reads its pages too (page files
    live on their node), and until a shuffle partition ``i`` of the DataFrame
    (``spark_partition_id()``) holds every event of lane ``i``."""
    sc = spark_context(spark)
    attach(spark)                        # the first sparkjournal call on the session
    source = JournalDataSource({**{k: str(v) for k, v in options.items()}, "path": path})
    read_options, log_uri, stored = source._read_setup()
    predicate = read_options.start_predicate()
    plan = plan_lanes(sc, path, log_uri, doing="reading", allow_partial=read_options.allow_partial,
                      predicate=predicate, skip_corrupt=read_options.skip_corrupt,
                      wait_s=read_options.missing_host_wait_s)
    lanes = plan.lanes
    pages = plan_pages(lanes, predicate, read_options.journal, stored) \
        if native_pages and plan.shared_view else {}
    schema = full_schema(stored)
    wanted = named(stored, [columns] if isinstance(columns, str) else columns) \
        if columns is not None else None
    paged = paged_frame(spark, pages, schema, predicate)
    if paged is not None and wanted is not None:
        paged = paged.select(*wanted.names)
    tails = [i for i, p in enumerate(lanes) if not (p.lane in pages and pages[p.lane].tail_empty)]
    if paged is not None and not tails:
        return paged, plan
    if not tails:               # a partial read that reaches no lane at all
        return spark.createDataFrame([], from_arrow_schema(schema if wanted is None else wanted)), plan
    described = located_lanes(sc, plan, tails, "reading",
                              {lane: {"pagesElsewhere": p.names} for lane, p in pages.items()})
    descriptions = _strings_frame(spark, described, LANE_COLUMN)
    task = lane_task(stored.serialize().to_pybytes(), read_options.journal, predicate,
                     read_options.skip_corrupt,
                     wanted.serialize().to_pybytes() if wanted is not None else None)
    tails = descriptions.mapInArrow(task, from_arrow_schema(schema if wanted is None else wanted))
    return (tails if paged is None else paged.union(tails)), plan


def located_lanes(sc, plan: LanePlan, which: list[int] | None, doing: str,
                  extra: dict | None = None):
    """An RDD of one JSON lane description (lane, node, commitLog, and
    ``extra[lane]`` if given) per lane of ``plan`` (those at the indexes
    ``which``, default all), one partition each, each preferring the lane's
    node (a task must still check it runs there: lane_scan.check_node)."""
    chosen = range(len(plan.lanes)) if which is None else which
    placed = [(plan.lanes[i], plan.locations[i]) for i in chosen]
    log.info("%s %d lanes of %s on their nodes: %s", doing, len(placed), plan.path,
             "; ".join(f"{p.lane} of {p.node} -> {', '.join(locations) or 'anywhere'}"
                       for p, locations in placed))
    described = [(json.dumps({"lane": p.lane, "node": p.node, "commitLog": p.log_uri,
                              **(extra or {}).get(p.lane, {})}), locations)
                 for p, locations in placed]
    return located_rdd(sc, described)


def spark_context(spark):
    try:
        return spark.sparkContext
    except Exception as error:          # Spark Connect sessions have no SparkContext
        raise SparkJournalError(
            "sparkjournal.read needs a classic SparkSession (it places tasks through the "
            "driver's SparkContext); with Spark Connect use "
            "spark.read.format('sparkjournal')") from error


def _strings_frame(spark, strings, column: str):
    """A one-column DataFrame of a JVM-backed RDD of strings, made in the JVM: a
    Python map would cost each partition an extra Python worker round trip, and
    the scan keeps the RDD's partitions and their preferred locations."""
    from pyspark.sql import DataFrame
    jvm = spark.sparkContext._jvm
    dataset = spark._jsparkSession.createDataset(strings._jrdd.rdd(),
                                                 jvm.org.apache.spark.sql.Encoders.STRING())
    return DataFrame(dataset.toDF(jvm.org.apache.spark.api.python.PythonUtils.toSeq([column])),
                     spark)


def lane_task(schema_ipc: bytes, journal_options: dict, predicate: Predicate, skip_corrupt: bool,
              columns_ipc: bytes | None = None):
    """The ``mapInArrow`` function: lane descriptions in, those lanes' events out
    (lane_scan.scan, which checks the node before reading anything), in the
    columns of ``columns_ipc`` (None: all)."""
    def run(batches):
        schema = pa.ipc.read_schema(pa.py_buffer(schema_ipc))
        columns = pa.ipc.read_schema(pa.py_buffer(columns_ipc)) if columns_ipc else None
        for batch in batches:
            for value in batch.column(LANE_COLUMN).to_pylist():
                described = json.loads(value)
                elsewhere = tuple(described.get("pagesElsewhere", ()))
                yield from scan(LaneSlice(described["lane"], described["node"],
                                          described["commitLog"], predicate=predicate,
                                          skip_corrupt=skip_corrupt, pages_elsewhere=elsewhere),
                                schema, journal_options, columns=columns)
    return run
