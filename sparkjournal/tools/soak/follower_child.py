"""The soak's streaming reader: follows the journal root and writes what it reads
into Parquet with Spark's exactly-once file sink.

    python -m sparkjournal.tools.soak.follower_child --root R --checkpoint C --out O
        [--available-now]

Runs until killed (a trigger every two seconds), or with --available-now reads
everything committed so far and exits 0. Prints READY once the query runs.
"""
from __future__ import annotations

import argparse
import sys

from ...format.constants import METADATA_COLUMNS as COLUMNS
from ...spark.query_stop import stop_between_batches
from .session import exit_status, soak_session


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--available-now", action="store_true")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv if argv is not None else sys.argv[1:])
    spark = soak_session("local[2]", "sparkjournal-soak-follower")
    stream = (spark.readStream.format("sparkjournal").option("maxRowsPerTrigger", 20_000)
              .load(args.root).select("id", COLUMNS.BATCH_ID, COLUMNS.LANE, COLUMNS.RECORD_ID, COLUMNS.ROW))
    trigger = {"availableNow": True} if args.available_now else {"processingTime": "2 seconds"}
    query = (stream.writeStream.format("parquet").option("path", args.out)
             .option("checkpointLocation", args.checkpoint).trigger(**trigger).start())
    print("READY", flush=True)
    if args.available_now:
        query.awaitTermination()
    else:
        while query.isActive:
            query.awaitTermination(1.0)
        stop_between_batches(query)
    return exit_status(query)


if __name__ == "__main__":
    sys.exit(main())
