"""Replay a journal: read every visible event, each lane on the node that holds
it, and write the events out or print a summary of them.

    spark-submit jobs/replay.py --output out/events                # parquet
    spark-submit jobs/replay.py --output out/json --format json --mode overwrite
    spark-submit jobs/replay.py --summary                          # events, lanes, hosts
    spark-submit jobs/replay.py --path /var/lib/sparkjournal/events --summary

The read is sparkjournal.read (the locality-aware read: one task per lane, run
on the lane's node; a task Spark places elsewhere fails and is retried). It sets
spark.locality.wait to --locality-wait (30s) so the scheduler waits for the
lane's node. The output holds the journal's event columns and the metadata
columns _batch_id, _commit_time, _host, _lane, _record_id. The default --path is
where jobs/stream_events.py writes by default.

The lanes are planned from the commit log and the live executors' hosts, so
the driver may run anywhere. A node holding committed events that no live
executor offers fails the job before any row is read, naming the node, host,
lanes and batches; with --allow-partial the job reads the rest, prints what it
left out, and exits 3.

Exit status: 0 done; 1 the read or the write failed (the reason on stderr; an
output the write had begun may be partial, as with any Spark write); 2 bad
arguments (nothing was read); 3 done with --allow-partial, but some lanes could
not be reached (named on stderr).
"""
from __future__ import annotations

import argparse
import logging
import sys

from pyspark.errors import PySparkException
from pyspark.sql import functions as F

from sparkjournal.errors import SparkJournalError
from sparkjournal.spark.job_args import add_journal_arguments, check_journal_arguments, session
from sparkjournal.spark.locality import located_read

MODES = ("errorifexists", "error", "append", "overwrite", "ignore")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="replay.py", description=__doc__.splitlines()[0])
    add_journal_arguments(parser)
    parser.add_argument("--output", help="write the events here")
    parser.add_argument("--format", default="parquet", help="output format (default parquet)")
    parser.add_argument("--mode", default="errorifexists", choices=MODES,
                        help="what to do if --output exists (default errorifexists)")
    parser.add_argument("--allow-partial", action="store_true",
                        help="read what can be reached when a node holding committed events "
                             "cannot be, name what was left out, and exit 3")
    parser.add_argument("--summary", action="store_true",
                        help="print events, batches, lanes, hosts, commit times, per-lane counts")
    args = parser.parse_args(argv)
    if not args.output and not args.summary:
        parser.error("nothing to do: give --output DIR to write the events, --summary to "
                     "print what the journal holds, or both")
    if not args.output and (args.format != "parquet" or args.mode != "errorifexists"):
        parser.error("--format and --mode apply to --output, which is missing")
    check_journal_arguments(parser, args, " (write a journal first, e.g. spark-submit "
                            "jobs/stream_events.py)")
    return args


def summarise(spark, args):
    """Prints the summary; returns the read's plan."""
    frame, plan = located_read(spark, args.path, native_pages=False, **_read_options(args))
    lanes = plan.lanes
    per_lane = (frame.select(F.spark_partition_id().alias("lane"), "_batch_id", "_host",
                             "_commit_time")
                .rollup("lane")
                .agg(F.count("*").alias("events"), F.countDistinct("_batch_id").alias("batches"),
                     F.collect_set("_host").alias("hosts"),
                     F.min("_commit_time").alias("first"), F.max("_commit_time").alias("last"))
                .collect())
    by_lane = {row.lane: row for row in per_lane}
    total = by_lane.get(None)
    if total is None or total.events == 0:
        print(f"journal {args.path}: no visible events in {len(lanes)} lanes")
        return plan
    print(f"journal {args.path}: {total.events} events, {total.batches} distinct batch ids, "
          f"{len(lanes)} lanes, hosts {', '.join(sorted(total.hosts))}")
    print(f"commit times: first {total.first}, last {total.last}")
    for index, lane in enumerate(lanes):
        row = by_lane.get(index)
        print(f"  {lane.lane} (node {lane.node}): {row.events if row else 0} events")
    return plan


def _read_options(args) -> dict:
    options = {"commitLog": args.commit_log} if args.commit_log else {}
    return {**options, "allowPartialRead": "true"} if args.allow_partial else options


def main(argv=None) -> int:
    args = parse_args(argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("sparkjournal.locality").setLevel(logging.INFO)
    spark = session("sparkjournal-replay", args)
    left_out = []
    try:
        if args.output:
            frame, plan = located_read(spark, args.path, **_read_options(args))
            frame.write.format(args.format).mode(args.mode).save(args.output)
            print(f"wrote the events of journal {args.path} to {args.output} "
                  f"({args.format}, mode {args.mode})")
            left_out.append(plan.left_out_line())
        if args.summary:
            left_out.append(summarise(spark, args).left_out_line())
    except (SparkJournalError, PySparkException) as error:
        print(f"replay.py: error: {error}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    if any(left_out):
        print(f"replay.py: {next(line for line in left_out if line)}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
