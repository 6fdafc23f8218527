"""Collecting a micro-batch to the driver when it is small (the sink's
``smallBatchRows`` path): the whole batch as one Arrow table if it has at
most ``limit`` rows, else None - learnt without pulling a large batch onto
the driver.

With the JVM connector loaded in the session (connector.py), one Spark job
runs the batch's own plan under a per-partition limit of ``limit + 1`` rows
and the driver's JVM writes the rows, converted to Arrow on the executors as
``toArrow`` converts them, into one Arrow IPC stream file for this process
(io.sparkjournal.spark.SmallBatchCollect); only the file's name crosses py4j.
Without it, ``df.limit(limit + 1).toArrow()``: the same answer, at the cost
of planning the batch again and gathering its rows into one partition
(~15-20 ms a batch here).

Crash behaviour: the file is private to this process (mkstemp) and removed
once read or when the collect fails; a process killed in between leaves one
``sparkjournal-small-batch-*`` file in the temp folder, nothing durable.
"""
from __future__ import annotations

import functools
import logging
import os
import tempfile

import pyarrow as pa

from ..errors import SparkJournalError

log = logging.getLogger("sparkjournal.sink")
_PREFIX = "sparkjournal-small-batch-"


class SmallBatchError(SparkJournalError):
    """The driver's collect of a small batch failed (the message names the
    JVM's exception chain)."""


def collect_small(df, limit: int):
    """(the batch as an Arrow table, or None when it has more than ``limit``
    rows; how it was collected: "jvm" or "limit")."""
    collector = _jvm_collector(df)
    if collector is None:
        table = df.limit(limit + 1).toArrow()
        return (table if table.num_rows <= limit else None), "limit"
    fd, path = tempfile.mkstemp(prefix=_PREFIX, suffix=".arrows")
    os.close(fd)
    try:
        rows = _call(collector, df, limit, path)
        if rows < 0:
            return None, "jvm"
        with pa.OSFile(path) as source:
            table = pa.ipc.open_stream(source).read_all()
    finally:
        os.unlink(path)
    if table.num_rows != rows:
        raise AssertionError(f"the small-batch file {path} held {table.num_rows} rows where "
                             f"the JVM wrote {rows}")
    return table, "jvm"


def _call(collector, df, limit: int, path: str) -> int:
    """SmallBatchCollect.toArrowFile, a failure raised as SmallBatchError
    naming the JVM's exception and its causes without their stack frames: a
    query stopped during the job (its jobs cancelled) then ends as stopped.
    Spark tells a stop from a failure by matching a regular expression over
    the foreachBatch error's text, and over a py4j error's full Java stack that
    expression overflows the stream thread's stack."""
    from py4j.protocol import Py4JJavaError
    try:
        return collector.toArrowFile(df._jdf, limit, path)
    except Py4JJavaError as error:
        log.debug("collecting a small batch failed", exc_info=True)
        raise SmallBatchError(f"collecting a micro-batch of at most {limit} rows on the driver "
                              f"failed: {_causes(error.java_exception)}") from None


def _causes(java_exception) -> str:
    """'Class: message; caused by Class: message' down the cause chain."""
    said = []
    while java_exception is not None and len(said) < 8:
        said.append(java_exception.toString())
        java_exception = java_exception.getCause()
    return "; caused by ".join(said)


def _jvm_collector(df):
    """The session JVM's SmallBatchCollect class, or None where the connector
    is not loaded (no JDK, SPARKJOURNAL_JVM=off) or the session has no JVM of
    its own (Spark Connect)."""
    try:
        jvm = df.sparkSession._jvm
    except Exception:                  # noqa: BLE001 - no py4j gateway: Connect
        return None
    return _collector_in(jvm) if jvm is not None else None


@functools.cache
def _collector_in(jvm):
    """Looked up once per JVM (a JVM's classpath does not change while it
    runs): the lookup is a py4j round trip per package name, ~0.6 ms."""
    from py4j.java_gateway import JavaClass
    found = jvm.io.sparkjournal.spark.SmallBatchCollect
    return found if isinstance(found, JavaClass) else None
