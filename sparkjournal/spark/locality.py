"""The locality-aware read: every lane is read on the node that holds it.

    import sparkjournal
    df = sparkjournal.read(spark, "/var/lib/sparkjournal/events")   # a DataFrame

Same columns (or the ``columns=`` asked, read_columns.py) and the same visible
events as ``spark.read.format("sparkjournal").load(path)`` (each lane is read by the same
``JournalReader.read``), but Python data source partitions cannot carry
preferred locations, so this builds the scan itself: the driver enumerates the
lanes (``JournalReader.partitions``), makes a JVM RDD of one small JSON lane
description per partition, each with the lane's location preferences
(placement.py), and reads the lanes in ``mapInArrow`` over it. One partition per
lane, no shuffle, so each lane's task keeps its preferences.

Preferences are not guarantees. A task that runs on a node where the lane's root
does not carry the lane's NODE_ID raises WrongNodeError before reading anything:
Spark retries it (up to ``spark.task.maxFailures``), and the read never returns
another node's data or silently nothing. Jobs should set ``spark.locality.wait``
(e.g. ``30s``; Spark's default is 3s) so the scheduler waits for the right
executor instead of retrying elsewhere.

Limit: the lanes are the ones the driver sees (node_roots: every root of the
path on the driver's machine, local-cluster, or a shared mount). A root only on
another machine's local disk is not enumerated; a path under which the driver
sees no lane at all is an error, never an empty result. A root without a NODE_ID
file cannot be placed or checked, and is an error too. Needs a classic
SparkSession (py4j), not Spark Connect.
"""
from __future__ import annotations

import json
import logging
import os
import socket

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_schema

from ..errors import SparkJournalError
from .datasource import JournalDataSource
from ..events.lane_scan import LaneSlice, WrongNodeError, scan
from ..events.read_columns import full_schema, named
from .page_read import paged_frame, plan_pages
from .placement import live_cluster, preferred_locations
from ..events.pruning import Predicate
from .reader import JournalReader, LanePartition

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
                 **options) -> tuple[object, list[LanePartition]]:
    """``read``, plus its lanes in partition order. With ``native_pages`` (the
    default) page files are read by Spark's Parquet reader (page_read.py) and
    their partitions come first; without it each lane's task reads its pages
    too, and until a shuffle partition ``i`` of the DataFrame
    (``spark_partition_id()``) holds every event of lane ``i``."""
    sc = spark_context(spark)
    source = JournalDataSource({**{k: str(v) for k, v in options.items()}, "path": path})
    read_options, log_uri, stored = source._read_setup()
    predicate = read_options.start_predicate()
    lanes = JournalReader(path, log_uri, stored, read_options.journal).partitions()
    pages = plan_pages(lanes, predicate, read_options.journal) if native_pages else {}
    schema = full_schema(stored)
    wanted = named(stored, [columns] if isinstance(columns, str) else columns) \
        if columns is not None else None
    paged = paged_frame(spark, pages, schema, predicate)
    if paged is not None and wanted is not None:
        paged = paged.select(*wanted.names)
    with_tail = [p for p in lanes if not (p.lane in pages and pages[p.lane].tail_empty)]
    if paged is not None and not with_tail:
        return paged, lanes
    described = located_lanes(sc, path, with_tail or lanes, "reading",
                              {lane: {"pagesElsewhere": p.names} for lane, p in pages.items()})
    descriptions = _strings_frame(spark, described, LANE_COLUMN)
    task = lane_task(stored.serialize().to_pybytes(), read_options.journal, predicate,
                     read_options.skip_corrupt,
                     wanted.serialize().to_pybytes() if wanted is not None else None)
    tails = descriptions.mapInArrow(task, from_arrow_schema(schema if wanted is None else wanted))
    return (tails if paged is None else paged.union(tails)), lanes


def located_lanes(sc, path: str, lanes: list[LanePartition], doing: str,
                  extra: dict | None = None):
    """An RDD of one JSON lane description (lane, node, commitLog, and
    ``extra[lane]`` if given) per lane, in ``lanes`` order, one partition each,
    each preferring the lane's node (a task must still check it runs there:
    lane_scan.check_node)."""
    _check_placeable(path, lanes)
    cluster = live_cluster(sc, {p.node.rpartition("@")[2] for p in lanes})
    placed = [(p, preferred_locations(path, os.path.dirname(p.lane), p.node, cluster)) for p in lanes]
    log.info("%s %d lanes of %s on their nodes: %s", doing, len(placed), path,
             "; ".join(f"{p.lane} -> {', '.join(locations)}" for p, locations in placed))
    described = [(json.dumps({"lane": p.lane, "node": p.node, "commitLog": p.log_uri,
                              **(extra or {}).get(p.lane, {})}), locations)
                 for p, locations in placed]
    return _located_rdd(sc, described)


def _check_placeable(path: str, lanes: list[LanePartition]) -> None:
    if not lanes:
        raise SparkJournalError(
            f"no lanes under {path} visible from the driver on {socket.gethostname()}: "
            f"sparkjournal.read enumerates the node roots the driver sees (this machine, "
            f"local-cluster, a shared mount); run the driver where the roots are, or check "
            f"the path and its {{host}}/{{executor}} placeholders")
    unplaced = sorted({os.path.dirname(p.lane) for p in lanes if p.node is None})
    if unplaced:
        raise SparkJournalError(
            f"node root(s) {', '.join(unplaced)} have no NODE_ID file, so the node holding "
            f"their lanes is unknown and a task cannot check it reads the right one; "
            f"read them with spark.read.format('sparkjournal') on the machine holding them")


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


def _located_rdd(sc, placed: list[tuple[str, list[str]]]):
    """A PySpark RDD of the strings in ``placed``, one partition each, with the
    given location preferences (SparkContext.makeRDD with preferences)."""
    from pyspark.rdd import RDD
    from pyspark.serializers import UTF8Deserializer
    jvm = sc._jvm
    to_seq = jvm.org.apache.spark.api.python.PythonUtils.toSeq
    pairs = to_seq([jvm.scala.Tuple2(value, to_seq(list(locations))) for value, locations in placed])
    string_tag = jvm.scala.reflect.ClassTag.apply(jvm.java.lang.String._java_lang_class)
    return RDD(sc._jsc.sc().makeRDD(pairs, string_tag).toJavaRDD(), sc, UTF8Deserializer())


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
