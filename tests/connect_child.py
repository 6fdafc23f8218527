"""A Spark Connect client, as a user runs one, for the tests (test_connect.py).

    python connect_child.py sink --url URL --data DIR [--txn Q] [--writer W]
                                 [--small-batch-rows N] [--batches N]
        Streams rate-micro-batch events (id = batch * ROWS + i) through
        foreachBatch(JournalSink(DIR/journal, ...)) with its checkpoint in
        DIR/checkpoint. With --batches it stops once this run finished N
        batches with rows, else it runs until killed (READY once the query
        runs). Prints a JSON line: {"error": the query's failure or null}.
    python connect_child.py format --url URL --data DIR [--batches N]
        The same through writeStream.format("sparkjournal").
    python connect_child.py read --url URL --path P
        A batch read and a stream read (availableNow, into a memory table) of
        the journal; prints their counts, distinct ids, min and max as JSON.
    python connect_child.py refusals --url URL --path P
        sparkjournal.delete and sparkjournal.read from the client; prints what
        each said.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROWS = 40


def client(url: str):
    from pyspark.sql import SparkSession
    return SparkSession.builder.remote(url).create()


def events(spark):
    return (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", ROWS).load()
            .selectExpr("value as id", "timestamp as ts", "repeat('x', 50) as payload"))


def run_stream(spark, writer, args) -> dict:
    """Starts the stream; with --batches, stops it once Spark finished that
    many batches of this run (its progress), else runs until killed."""
    path = os.path.join(args.data, "journal")
    writer = writer.option("checkpointLocation", os.path.join(args.data, "checkpoint")).trigger(
        processingTime="0 seconds")
    query = writer.start(path) if args.command == "format" else writer.start()
    print("READY", flush=True)
    commits = os.path.join(args.data, "checkpoint", "commits")
    before = _finished(commits)
    while query.isActive and (args.batches is None or _finished(commits) < before + args.batches):
        time.sleep(0.2)
    error = query.exception()
    if query.isActive:
        query.stop()
    return {"error": None if error is None else str(error), "query": str(query.id)}


def _finished(commits: str) -> int:
    """Batches Spark finished in this checkpoint (its commits folder's entries)."""
    return sum(1 for name in os.listdir(commits) if name.isdigit()) if os.path.isdir(commits) else 0


def sink(args) -> dict:
    from sparkjournal import JournalSink
    spark = client(args.url)
    options = {}
    if args.txn:
        options["txnAppId"] = args.txn
    if args.writer:
        options["writer"] = args.writer
    if args.small_batch_rows is not None:
        options["smallBatchRows"] = args.small_batch_rows
    journal_sink = JournalSink(os.path.join(args.data, "journal"), **options)
    return run_stream(spark, events(spark).writeStream.foreachBatch(journal_sink), args)


def format_stream(args) -> dict:
    spark = client(args.url)
    return run_stream(spark, events(spark).writeStream.format("sparkjournal"), args)


def read(args) -> dict:
    from pyspark.sql import functions as F
    spark = client(args.url)

    def summary(frame) -> dict:
        row = frame.agg(F.count("*").alias("n"), F.countDistinct("id").alias("distinct"),
                        F.min("id").alias("min"), F.max("id").alias("max")).first()
        return row.asDict()
    batch = summary(spark.read.format("sparkjournal").load(args.path))
    name = f"journal_{os.getpid()}"
    query = (spark.readStream.format("sparkjournal").load(args.path).select("id")
             .writeStream.format("memory").queryName(name).trigger(availableNow=True).start())
    query.awaitTermination()
    return {"batch": batch, "stream": summary(spark.table(name))}


def refusals(args) -> dict:
    import sparkjournal
    spark = client(args.url)
    said = {}
    for name, call in (("delete", lambda: sparkjournal.delete(spark, args.path, "id = 1")),
                       ("read", lambda: sparkjournal.read(spark, args.path))):
        try:
            call()
            said[name] = None
        except Exception as error:      # noqa: BLE001 - what the user is told is the result
            said[name] = f"{type(error).__name__}: {error}"
    return said


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("sink", "format", "read", "refusals"))
    parser.add_argument("--url", required=True)
    parser.add_argument("--data")
    parser.add_argument("--path")
    parser.add_argument("--txn")
    parser.add_argument("--writer")
    parser.add_argument("--small-batch-rows", type=int)
    parser.add_argument("--batches", type=int)
    args = parser.parse_args()
    run = {"sink": sink, "format": format_stream, "read": read, "refusals": refusals}[args.command]
    print(json.dumps(run(args), default=str), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
