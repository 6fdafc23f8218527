"""Maintain a journal cluster-wide: one task per lane, each on the node that
holds the lane - retention, resolving and carrying out what lanes no writer
holds wait for, and online compaction (sparkjournal/maintenance/lane_maintenance.py).

    spark-submit jobs/compact.py                                   # ./data/journal
    spark-submit jobs/compact.py --path /var/lib/sparkjournal/events --option retention=7d
    spark-submit jobs/compact.py --force --json /var/log/sparkjournal/compact.json

Idempotent: run it as often as you like (conf/ has a cron line and a systemd
timer for a nightly run); a second run right after the first finds nothing to
do. It prints a progress line while lanes are being done, a line per lane
(files before and after, bytes reclaimed, records past retention, requests and
prepared transactions resolved, time taken) and the totals. ``sparkjournal
compact PATH`` does the same for one node without Spark.

Exit status: 0 done; 1 a lane failed (its reason is printed; the other lanes
were still done) or Spark failed; 2 bad arguments (nothing was done).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import sys
import time

from pyspark.errors import PySparkException

from sparkjournal.cli.compact import options_of
from sparkjournal.cli.paths import UsageError
from sparkjournal.config import load_config
from sparkjournal.errors import ConfigError, SparkJournalError
from sparkjournal.maintenance.lane_maintenance import maintain_lane
from sparkjournal.maintenance.root_maintenance import summary, summary_line
from sparkjournal.spark.job_args import add_journal_arguments, check_journal_arguments, session
from sparkjournal.spark.lane_jobs import run_on_lanes

def parse_args(argv):
    parser = argparse.ArgumentParser(prog="compact.py", description=__doc__.splitlines()[0])
    add_journal_arguments(parser)
    parser.add_argument("--force", action="store_true",
                        help="compact every lane with a sealed file, whatever compactMinFiles "
                             "and compactPercentage say")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a journal option (retention=7d, compactMinFiles=4, ...); repeatable")
    parser.add_argument("--json", metavar="FILE", help="also write every lane's report as JSON")
    args = parser.parse_args(argv)
    try:
        args.options = options_of(args.option)
        load_config(args.options)
    except (UsageError, ConfigError) as error:
        parser.error(str(error))
    check_journal_arguments(parser, args)
    return args


def lane_task(options: dict, force: bool):
    """What each lane's task runs, on the lane's node: its report as a dict."""
    def run(lane: str, node: str, log_uri: str) -> dict:
        report = maintain_lane(lane, node, log_uri, load_config(options), force=force)
        return {"line": report.line(), **dataclasses.asdict(report)}
    return run


def main(argv=None) -> int:
    args = parse_args(argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    spark = session("sparkjournal-compact", args)
    started = time.monotonic()
    try:
        reports = run_on_lanes(spark, args.path, lane_task(args.options, args.force),
                               doing="maintaining", log_uri=args.commit_log,
                               progress=lambda line: print(line, flush=True))
    except (SparkJournalError, PySparkException) as error:
        print(f"compact.py: error: {error}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    for report in reports:
        print(report.pop("line"))
    totals = summary(reports)
    totals["job_seconds"] = round(time.monotonic() - started, 3)
    print(summary_line(totals))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"totals": totals, "lanes": reports}, handle, indent=1, default=str)
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
