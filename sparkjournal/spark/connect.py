"""Spark Connect clients: telling their sessions apart, and refusing clearly
what needs a classic session.

A Connect client (``SparkSession.builder.remote(...)``, or ``spark.api.mode=
connect``) has no SparkContext and no py4j gateway: every call becomes a plan
the server runs. Its ``foreachBatch`` function is pickled by the client and
run in a Python process the server starts on its driver's host, given the
batch's DataFrame and its id - but not the streaming query's id, which the
sink's exactly-once decision is keyed by (the sink then needs ``txnAppId``).
``format("sparkjournal")`` reads and writes work as from a classic session;
calls that place a task on each journal node through the driver's
SparkContext (``sparkjournal.read``, ``delete``, the jobs) need a classic one.
"""
from __future__ import annotations

from ..errors import SparkJournalError


def is_connect(session) -> bool:
    """Whether ``session`` (a SparkSession, or a DataFrame's) is a Spark Connect client's."""
    return type(session).__module__.startswith("pyspark.sql.connect")


def require_classic(session, what: str, instead: str) -> None:
    """SparkJournalError, before anything is done, where ``session`` is a
    Connect client's: ``what`` needs a classic session; ``instead`` says
    what to do."""
    if is_connect(session):
        raise SparkJournalError(f"{what} needs a classic SparkSession (it places a task on each "
                                f"journal node through the driver's SparkContext), and this one "
                                f"is a Spark Connect client's: {instead}")
