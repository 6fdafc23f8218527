"""The shape every spark-submit maintenance job shares (jobs/compact.py,
jobs/page.py): arguments checked before Spark starts (exit 2), one task per
lane on the lane's node (lane_jobs.run_on_lanes) running the job's lane pass
(maintenance/lane_maintenance.py), progress lines while it runs, a line per
lane and the totals after, ``--json FILE`` with every report, and exit 1 if a
lane or Spark failed."""
from __future__ import annotations

import argparse
import dataclasses
import logging
import socket
import sys
import time

from pyspark.errors import PySparkException

from ..config import load_config
from ..errors import ConfigError, SparkJournalError, UsageError
from ..maintenance.lane_maintenance import maintain_lane, page_pass
from ..maintenance.root_maintenance import page_summary_line, summary, summary_line
from ..spark.job_args import add_journal_arguments, check_journal_arguments, session
from ..spark.lane_jobs import run_on_lanes
from .compact import maintain_commit_log, options_of, write_reports
from .main import FORCE_HELP


@dataclasses.dataclass(frozen=True)
class MaintenanceJob:
    prog: str                    # "compact.py"
    description: str
    force_help: str
    doing: str                   # "maintaining", "paging": progress lines and the job group
    lane_pass: object            # (lane, node, log_uri, config, *, force) -> LaneReport
    summary_line: object         # totals -> the last line


COMPACT = MaintenanceJob(
    prog="compact.py", description="Maintain a journal cluster-wide: retention, the sweep, "
    "paging and online compaction, one task per lane on its node.", doing="maintaining",
    force_help=FORCE_HELP["compact"],
    lane_pass=maintain_lane, summary_line=summary_line)

PAGE = MaintenanceJob(
    prog="page.py", description="Page a journal cluster-wide: lanes over maxSizeBytes (or "
    "whose root is over maxRootSizeBytes) move their oldest events into Parquet page files, "
    "one task per lane on its node.", doing="paging",
    force_help=FORCE_HELP["page"],
    lane_pass=page_pass, summary_line=page_summary_line)


def parse_args(job: MaintenanceJob, argv):
    parser = argparse.ArgumentParser(prog=job.prog, description=job.description)
    add_journal_arguments(parser)
    parser.add_argument("--force", action="store_true", help=job.force_help)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a journal option (retention=7d, maxSizeBytes=1g, "
                             "compactMinFiles=4, ...); repeatable")
    parser.add_argument("--json", metavar="FILE", help="also write every lane's report as JSON")
    args = parser.parse_args(argv)
    try:
        args.options = options_of(args.option)
        load_config(args.options)
    except (UsageError, ConfigError) as error:
        parser.error(str(error))
    check_journal_arguments(parser, args)
    return args


def lane_task(lane_pass, options: dict, force: bool):
    """What each lane's task runs, on the lane's node: its report as a dict."""
    def run(lane: str, node: str, log_uri: str) -> dict:
        report = lane_pass(lane, node, log_uri, load_config(options), force=force)
        host = socket.gethostname()                 # lanes of two hosts may share a path
        return {"line": f"{host}:{report.line()}", "host": host, **dataclasses.asdict(report)}
    return run


def main(job: MaintenanceJob, argv=None) -> int:
    args = parse_args(job, argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    spark = session(f"sparkjournal-{job.prog.removesuffix('.py')}", args)
    started = time.monotonic()
    try:
        reports = run_on_lanes(spark, args.path, lane_task(job.lane_pass, args.options, args.force),
                               doing=job.doing, log_uri=args.commit_log,
                               progress=lambda line: print(line, flush=True))
        log_figures = (maintain_commit_log(args.path, args.commit_log, load_config(args.options))
                       if job.lane_pass is maintain_lane else None)
    except (SparkJournalError, PySparkException) as error:
        print(f"{job.prog}: error: {error}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    for report in reports:
        print(report.pop("line"))
    totals = summary(reports)
    if log_figures is not None:
        totals["commit_log"] = log_figures
    totals["job_seconds"] = round(time.monotonic() - started, 3)
    print(job.summary_line(totals))
    write_reports(args.json, totals, reports)
    return 1 if totals["failed"] else 0
