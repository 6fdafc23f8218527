"""The arguments every spark-submit job over a journal has (jobs/*.py): the
journal's path, its commit log, spark.locality.wait and the master; checked
before Spark starts, so a bad argument exits 2 having done nothing."""
from __future__ import annotations

import os
import re

SPARK_DURATION = re.compile(r"[0-9]+(us|ms|s|m|min|h|d)?")


def add_journal_arguments(parser) -> None:
    parser.add_argument("--path", default="./data/journal",
                        help="the journal (node root path, may hold {host}/{executor}); "
                             "default: where jobs/stream_events.py writes")
    parser.add_argument("--commit-log", help="the journal's commit log, if not <path>/_commits")
    parser.add_argument("--locality-wait", default="30s",
                        help="spark.locality.wait for this job (default 30s)")
    parser.add_argument("--master", help="Spark master when not given by spark-submit")


def check_journal_arguments(parser, args, missing_hint: str = "") -> None:
    """parser.error (exit 2) on a bad duration, or a path that is no folder
    here while the commit log is the default one under it (a driver off the
    journal's hosts sees no root, but must be told where the commit log is)."""
    if not SPARK_DURATION.fullmatch(args.locality_wait):
        parser.error(f"--locality-wait {args.locality_wait!r} is not a Spark duration "
                     f"(e.g. 30s, 500ms, 1min)")
    if "{" not in args.path and not args.commit_log and not os.path.isdir(args.path):
        parser.error(f"--path {args.path}: no such directory{missing_hint}; a driver that "
                     f"does not hold the journal (on a cluster) names --commit-log")


def session(app_name: str, args):
    """The job's SparkSession, spark.locality.wait set so tasks wait for their lane's
    node, with sparkjournal's JVM connector (connector.py)."""
    from pyspark.sql import SparkSession
    from .connect import require_classic
    from .connector import attach, configure
    builder = SparkSession.builder.appName(app_name).config("spark.locality.wait", args.locality_wait)
    if args.master:
        builder = builder.master(args.master)
    spark = configure(builder).getOrCreate()
    require_classic(spark, f"the job {app_name}",
                    "run it with spark-submit without spark.api.mode=connect; nothing was done")
    attach(spark)
    spark.sparkContext.setLogLevel("WARN")
    return spark
