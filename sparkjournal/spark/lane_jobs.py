"""Running one task per lane, each on the node that holds the lane: the shape
of every maintenance job (jobs/compact.py, jobs/page.py).

    results = run_on_lanes(spark, path, task, doing="compacting")

``task(lane, node, log_uri)`` runs in an executor Python worker on the lane's
node (the locality-aware placement of locality.py; a task Spark places
elsewhere fails with WrongNodeError before touching anything and is retried)
and returns a JSON-able dict; ``run_on_lanes`` returns them in lane order.
``progress`` (a callable taking a line) hears how many lanes are done while the
job runs. The lanes are every lane the live executors' hosts hold, committed
or not (lane_plan.py); a lane the commit log names that no host offers comes
back as a failed lane report naming its node, host and committed batches, after
the other lanes were done.
"""
from __future__ import annotations

import json
import threading
import uuid

from ..events.commit_log import default_log_uri
from ..events.committed_lanes import by_node, describe_nodes
from ..events.lane_scan import LaneSlice, check_node
from .lane_plan import plan_lanes
from .locality import located_lanes, spark_context

PROGRESS_SECONDS = 5.0


def run_on_lanes(spark, path: str, task, *, doing: str, log_uri: str | None = None,
                 progress=None) -> list[dict]:
    sc = spark_context(spark)
    log_uri = log_uri or default_log_uri(path)
    plan = plan_lanes(sc, path, log_uri, doing=doing, allow_partial=True)
    lanes = plan.lanes
    unreached = [_unreached(group, plan.why) for group in by_node(plan.left_out).values()]
    if not lanes:
        return unreached
    rdd = located_lanes(sc, plan, None, doing)

    def run(description: str) -> str:
        described = json.loads(description)
        check_node(LaneSlice(described["lane"], described["node"], described["commitLog"]))
        return json.dumps(task(described["lane"], described["node"], described["commitLog"]),
                          default=str)

    group = f"sparkjournal-{doing.replace(' ', '-')}-{uuid.uuid4().hex[:8]}"
    sc.setJobGroup(group, f"sparkjournal: {doing} {len(lanes)} lanes of {path}")
    done = threading.Event()
    watcher = None
    if progress is not None:
        watcher = threading.Thread(target=_report_progress, args=(sc, group, len(lanes), doing,
                                                                   progress, done), daemon=True)
        watcher.start()
    try:
        return [json.loads(result) for result in rdd.map(run).collect()] + unreached
    finally:
        done.set()
        if watcher is not None:
            watcher.join()
        sc.setLocalProperty("spark.jobGroup.id", None)


def _report_progress(sc, group: str, total: int, doing: str, progress, done) -> None:
    tracker = sc.statusTracker()
    last = None
    while not done.wait(PROGRESS_SECONDS):
        finished = 0
        for job_id in tracker.getJobIdsForGroup(group):
            job = tracker.getJobInfo(job_id)
            for stage_id in (job.stageIds if job else []):
                stage = tracker.getStageInfo(stage_id)
                finished += stage.numCompletedTasks if stage else 0
        if finished != last:
            progress(f"{doing}: {finished}/{total} lanes done")
            last = finished


def _unreached(group, why: dict) -> dict:
    """The report of a node no task could reach (all its lanes in one)."""
    first = group[0]
    error = f"not reached: {describe_nodes(group, why)}"
    where = f"{first.host}:{first.root}/{{{','.join(lane.lane for lane in group)}}}"
    return {"lane": where, "node": first.node, "error": error, "line": f"{where}: FAILED: {error}"}
