"""The main job: stream events into a journal with exactly-once micro-batches,
then read the journal back and print what it holds.

    spark-submit jobs/stream_events.py                      # generated events, ./data
    spark-submit jobs/stream_events.py --input-dir DIR      # a folder of JSON event files

Executor tasks write each micro-batch into the node's journal lanes and PREPARE;
the driver commits the batch in the commit log (two-phase commit, see
sparkjournal/spark/sink.py). In local mode (local[*] by default) a batch of at
most 10,000 rows is written by the driver itself, into the same root
(smallBatchRows; the log says so at the start and for each batch). Restart it
with the same --data folder and it continues from its checkpoint; a replayed
batch is skipped, so no event lands twice.

It reads the journal back with spark.read.format("sparkjournal") and says which
reader served it: the JVM connector (a BatchScan, columns pruned) wherever the
session has it - added to the session by sparkjournal.configure, or by the
sink's first batch under a spark-submit that started without it - else the
Python data source.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import sparkjournal
from sparkjournal import JournalSink
from sparkjournal.spark.connector import reads_through_jvm
from sparkjournal.spark.query_stop import stop_between_batches

EVENT_SCHEMA = "id LONG, ts TIMESTAMP, key STRING, payload STRING, amount DOUBLE"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="./data", help="folder for the journal and checkpoint")
    parser.add_argument("--input-dir", help="stream JSON files from this folder instead of generating")
    parser.add_argument("--rows-per-batch", type=int, default=10_000)
    parser.add_argument("--batches", type=int, default=5, help="generated micro-batches to write")
    parser.add_argument("--master", default=None, help="Spark master when not given by spark-submit")
    return parser.parse_args(argv)


def generated_events(spark, rows_per_batch: int):
    rate = (spark.readStream.format("rate-micro-batch")
            .option("rowsPerBatch", rows_per_batch).load())
    return rate.select(
        F.col("value").alias("id"),
        F.col("timestamp").alias("ts"),
        F.substring(F.sha2(F.col("value").cast("string"), 256), 1, 16).alias("key"),
        F.repeat(F.lit("p"), 200).alias("payload"),
        (F.col("value") % 1000 / 10.0).alias("amount"))


def main(argv=None) -> int:
    args = parse_args(argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("py4j").setLevel(logging.WARNING)    # its INFO is every gateway call
    builder = SparkSession.builder.appName("sparkjournal-stream-events")
    # spark-submit (which sets PYSPARK_GATEWAY_PORT) has chosen the master,
    # local[*] by default; run with plain python, the job picks local[*] itself.
    if args.master or "PYSPARK_GATEWAY_PORT" not in os.environ:
        builder = builder.master(args.master or "local[*]")
    spark = sparkjournal.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    data = os.path.abspath(args.data)
    journal_root = os.path.join(data, "journal")
    checkpoint = os.path.join(data, "checkpoint")
    if args.input_dir:
        events = spark.readStream.schema(EVENT_SCHEMA).json(args.input_dir)
        trigger = {"availableNow": True}
    else:
        events = generated_events(spark, args.rows_per_batch)
        trigger = {"processingTime": "1 second"}     # a gap after each batch to stop in
    sink = JournalSink(journal_root)
    query = (events.writeStream.foreachBatch(sink)
             .option("checkpointLocation", checkpoint)
             .trigger(**trigger).start())
    if args.input_dir:
        query.awaitTermination()
    else:
        while query.isActive and sink.batches_landed < args.batches:
            query.awaitTermination(0.5)
        stop_between_batches(query)
    if query.exception():
        raise query.exception()
    events = spark.read.format("sparkjournal").load(journal_root)
    print("read back through " + ("the JVM connector (a columnar BatchScan)"
                                  if reads_through_jvm(events) else "the Python data source"))
    counted = events.agg(F.count("*").alias("events"), F.countDistinct("id").alias("ids")).first()
    total, distinct = counted["events"], counted["ids"]
    print(f"journal {journal_root}: {total} events, {distinct} distinct ids "
          f"({'every event exactly once' if distinct == total else 'DUPLICATES FOUND'})")
    for row in events.orderBy("id").limit(3).collect():
        shown = row.asDict()
        shown["payload"] = f"<{len(shown['payload'])} chars>"
        print("  ", shown)
    spark.stop()
    return 0 if distinct == total else 1


if __name__ == "__main__":
    sys.exit(main())
