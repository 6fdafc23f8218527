"""The soak's streaming writer: generated events into a journal root through
JournalSink, one micro-batch a second.

    python -m sparkjournal.tools.soak.writer_child --root R --checkpoint C --master M
        --rows N [--until-batch B] [--writer auto|python|jvm]

Event ids are predictable: batch b holds ids b*N .. b*N+N-1 (rate-micro-batch),
so the verdict knows every event that was generated. Prints READY once the query
runs. Without --until-batch it runs until killed; with it, it stops (between
batches) once the commit log holds batch B, and exits 0.
"""
from __future__ import annotations

import argparse
import sys

from pyspark.sql import functions as F

from ...events.commit_log import default_log_uri
from ...events.log_state import LogState
from ...spark.sink import JournalSink
from ...spark.query_stop import stop_between_batches
from .session import exit_status, soak_session

QUERY = "soak"
# Checkpoints of the commit log and its retention happen under fire: every 5
# decided batches, keeping 3 entries, with no age.
UNDER_FIRE = {"commitLogCheckpointInterval": 5, "commitLogRetainBatches": 3,
              "commitLogRetainTime": "0s"}


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--master", required=True)
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--until-batch", type=int)
    parser.add_argument("--writer", choices=("auto", "python", "jvm"), default="auto")
    return parser.parse_args(argv)


def events(spark, rows: int):
    rate = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows)
            .option("numPartitions", 2).load())
    return rate.select(
        F.col("value").alias("id"), F.col("timestamp").alias("ts"),
        F.substring(F.sha2(F.col("value").cast("string"), 256), 1, 16).alias("key"),
        F.repeat(F.lit("p"), 100).alias("payload"), (F.col("value") % 1000 / 10.0).alias("amount"))


def main(argv=None) -> int:
    args = parse_args(argv if argv is not None else sys.argv[1:])
    spark = soak_session(args.master, "sparkjournal-soak-writer")
    query = (events(spark, args.rows).writeStream
             .foreachBatch(JournalSink(args.root, txnAppId=QUERY, writer=args.writer,
                                       **UNDER_FIRE))
             .option("checkpointLocation", args.checkpoint)
             .trigger(processingTime="1 second").start())
    print("READY", flush=True)
    log = LogState(default_log_uri(args.root))
    while query.isActive:
        query.awaitTermination(0.5)
        if args.until_batch is not None and log.done(QUERY, args.until_batch):
            stop_between_batches(query)
    return exit_status(query)


if __name__ == "__main__":
    sys.exit(main())
