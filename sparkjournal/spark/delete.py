"""Deleting events by predicate:

    import sparkjournal
    report = sparkjournal.delete(spark, "/var/lib/sparkjournal/events", "key = 'x'")

Every lane is read on its node (the locality-aware read, locality.py: a node
holding committed events that cannot be reached fails the delete before
anything is deleted, unless ``allowPartialRead=true``, when the report names
the lanes left undeleted) with a
column ``_hit`` = the predicate as Spark SQL (null counts as no match, as in a
SQL DELETE). In the same task, on the lane's node, the lane's hits become one
delete request (events/requests.py): a stored record whose every visible row
matched is deleted whole (a DELETE record), one where only some did gets a
deletion vector of those rows (their original positions, ``_row``). The task
then carries the request out if no process holds the lane; otherwise the
lane's writer does at its next task (a Python worker's), or maintenance once
the writer let the lane go (a JVM task's writer lets it go at its next task,
or after laneIdleTimeout). Readers apply pending requests at once,
so once ``delete`` returns no read sees the deleted events; compaction drops
them physically.

Crash behaviour: a task killed before its request is durable deleted nothing
of its lane and Spark retries it; a retried task that finds the rows already
deleted writes no request. A request written is carried out exactly once in
effect (carrying out twice changes nothing).
"""
from __future__ import annotations

import dataclasses
import json
import logging

import pyarrow as pa

from ..config import load_config
from ..errors import SparkJournalError
from ..events.lane_deletes import DELETE
from ..events.requests import submit
from ..format.constants import DELETE_REQUEST as FIELDS, METADATA_COLUMNS as COLUMNS
from ..maintenance.lane_requests import apply_now, carry_out_all
from .connect import require_classic
from .lane_cache import held_here
from .locality import located_read
from .sink import split_options

log = logging.getLogger("sparkjournal.delete")
RESULT_DDL = ("lane string, records_whole long, records_partly long, rows long, "
              "request string, carried_out boolean")


@dataclasses.dataclass
class DeleteReport:
    predicate: str
    rows: int = 0                        # events deleted
    records_whole: int = 0               # stored records deleted whole (DELETE)
    records_partly: int = 0              # stored records given a deletion vector
    lanes: list = dataclasses.field(default_factory=list)         # lanes with deletes
    pending_lanes: list = dataclasses.field(default_factory=list)  # their writer carries it out
    left_out: str = ""                   # allowPartialRead: the unreachable lanes not deleted in

    def line(self) -> str:
        return (f"deleted {self.rows} events matching {self.predicate!r}: {self.records_whole} "
                f"stored records whole, {self.records_partly} in part, in {len(self.lanes)} lanes"
                + (f" ({len(self.pending_lanes)} carried out by their writer at its next task or "
                   f"by maintenance; "
                   f"readers already leave them out)" if self.pending_lanes else "")
                + (f"; NOT DELETED in unreachable lanes: {self.left_out}" if self.left_out else ""))


def delete(spark, path: str, predicate: str, **options) -> DeleteReport:
    """Deletes the events of the journal at ``path`` for which ``predicate`` (a
    Spark SQL condition over the events' and metadata columns) is true."""
    from pyspark.sql import functions as F
    require_classic(spark, "sparkjournal.delete",
                    "call it from a classic session (pyspark, a notebook's local session, or "
                    "spark-submit without spark.api.mode=connect) on a driver that reaches the "
                    "journal's commit log; nothing was deleted")
    _sink, journal_options = split_options({k: str(v) for k, v in options.items()})
    frame, plan = located_read(spark, path, native_pages=False, **options)
    try:
        hit = F.coalesce(F.expr(predicate).cast("boolean"), F.lit(False))
        flagged = frame.select(COLUMNS.RECORD_ID, COLUMNS.ROW, hit.alias("_hit"))
    except Exception as error:                        # parse and analysis errors
        raise SparkJournalError(f"sparkjournal.delete: {predicate!r} is not a Spark SQL condition "
                                f"over the columns of {path} ({', '.join(frame.columns)}): "
                                f"{str(error).splitlines()[0]}") from error
    lane_paths = [p.lane for p in plan.lanes]
    results = flagged.mapInArrow(_lane_task(lane_paths, predicate, journal_options),
                                 RESULT_DDL).collect()
    report = DeleteReport(predicate)
    for row in results:
        report.rows += row.rows
        report.records_whole += row.records_whole
        report.records_partly += row.records_partly
        report.lanes.append(row.lane)
        if not row.carried_out:
            report.pending_lanes.append(row.lane)
    report.left_out = plan.left_out_line()
    (log.warning if report.left_out else log.info)("%s", report.line())
    return report


def _lane_task(lane_paths: list[str], predicate: str, journal_options: dict):
    """The mapInArrow function: the flagged events of lane i (partition i of
    the located read, on its node) in, that lane's delete summary out."""
    def run(batches):
        from pyspark import TaskContext
        lane = lane_paths[TaskContext.get().partitionId()]
        hits: dict[int, list] = {}
        totals: dict[int, int] = {}
        for batch in batches:
            ids = batch.column(COLUMNS.RECORD_ID).to_pylist()
            rows = batch.column(COLUMNS.ROW).to_pylist()
            for record_id, row, matched in zip(ids, rows, batch.column("_hit").to_pylist()):
                totals[record_id] = totals.get(record_id, 0) + 1
                if matched:
                    hits.setdefault(record_id, []).append(row)
        if not hits:
            return
        records = {str(record_id): (None if len(found) == totals[record_id] else sorted(found))
                   for record_id, found in hits.items()}
        path = submit(lane, DELETE, {FIELDS.RECORDS: records, FIELDS.WHY: predicate})
        carried_out = _carry_out_here(lane) or apply_now(lane, load_config(journal_options))
        whole = sum(1 for rows in records.values() if rows is None)
        yield pa.RecordBatch.from_pylist([{
            "lane": lane, "records_whole": whole, "records_partly": len(records) - whole,
            "rows": sum(len(found) for found in hits.values()), "request": path,
            "carried_out": carried_out}])
    return run


def _carry_out_here(lane: str) -> bool:
    """Carries the lane's requests out with this worker's own writer of the lane
    (a Python worker that ran a sink task on it keeps it open)."""
    journal = held_here(lane)
    if journal is None:
        return False
    journal.refresh()
    carry_out_all(journal)
    return True


def as_json(report: DeleteReport) -> str:
    return json.dumps(dataclasses.asdict(report))
