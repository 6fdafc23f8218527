"""A Spark driver for the tests that must kill one or run another master.

    python spark_child.py stream --sink foreachBatch|format|smallBatches|python --data DIR [--until N]
        Streams rate-micro-batch events (value = batch * rows + i) into DIR/journal
        with a checkpoint in DIR/checkpoint (foreachBatch: JournalSink's tasks write
        with the default writer, the JVM's where the connector is built; python:
        in Python workers, writer="python"); prints READY once the query runs.
        Without --until it runs until killed; with it, it stops once N batches
        are decided in the commit log.
    python spark_child.py cluster --data DIR
        On local-cluster[2,1,1024], writes two batches through JournalSink into
        DIR/node-{executor} (one root per executor JVM) with partition 0's first
        attempt failing after its PREPARE; prints a JSON summary with the
        sink's log lines (smallBatchRows unset: off, as on any cluster).
    python spark_child.py locality --data DIR
        On local-cluster[2,2,1024] with spark.locality.wait=30s, writes two
        batches into DIR/node-{executor} (two cores per executor: about two
        lanes per root), reads them back three times with sparkjournal.read and
        prints, as JSON, every event id with the executor whose task read it.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from conftest import SPARK_TEST_CONF  # noqa: E402

ROWS_PER_BATCH = 50


def session(master: str, **conf):
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.master(master).appName("sparkjournal-test-child")
    for key, value in {**SPARK_TEST_CONF, "spark.pyspark.python": sys.executable, **conf}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


# The commit log checkpoints every 2 decided batches and retention keeps 2
# entries with no age, so checkpoints and deletions happen under the kills.
UNDER_FIRE = {"commitLogCheckpointInterval": 2, "commitLogRetainBatches": 2,
              "commitLogRetainTime": "0s"}


def stream(args) -> int:
    from sparkjournal import JournalSink
    from sparkjournal.events.log_state import LogState
    spark = session("local[2,4]")
    path, checkpoint = os.path.join(args.data, "journal"), os.path.join(args.data, "checkpoint")
    events = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", ROWS_PER_BATCH)
              .load().selectExpr("value as id", "timestamp as ts", "repeat('x', 100) as payload"))
    writer = events.writeStream.option("checkpointLocation", checkpoint).trigger(processingTime="0 seconds")
    if args.sink == "foreachBatch":
        query = writer.foreachBatch(JournalSink(path, smallBatchRows=0, **UNDER_FIRE)).start()
    elif args.sink == "smallBatches":                   # written by the driver (smallBatchRows)
        query = writer.foreachBatch(JournalSink(path, smallBatchRows=ROWS_PER_BATCH,
                                                **UNDER_FIRE)).start()
    elif args.sink == "python":                         # Python workers write (writer="python")
        query = writer.foreachBatch(JournalSink(path, smallBatchRows=0, writer="python",
                                                **UNDER_FIRE)).start()
    else:
        query = writer.options(**UNDER_FIRE).format("sparkjournal").start(path)
    print("READY", flush=True)
    log = LogState(os.path.join(path, "_commits"))
    while query.isActive:
        query.awaitTermination(0.2)
        view = log.view(refresh=True)
        if args.until and sum(view.decided_count(q) for q in view.queries()) >= args.until:
            query.stop()
    if query.exception():
        print("FAILED", query.exception(), flush=True)
        return 1
    return 0


class Lines(logging.Handler):
    """A log handler keeping each record's message in ``lines``."""

    def __init__(self):
        super().__init__(logging.INFO)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def cluster(args) -> int:
    from sparkjournal import JournalSink, read_table
    from sparkjournal.spark.lane_writer import INJECT_FAILURE
    from sparkjournal.events.visible_events import lanes_of
    spark = session("local-cluster[2,1,1024]")
    logged = Lines()
    logging.getLogger("sparkjournal.sink").addHandler(logged)
    logging.getLogger("sparkjournal.sink").setLevel(logging.INFO)
    path = os.path.join(args.data, "node-{executor}")
    sink = JournalSink(path, txnAppId="cluster")
    frame = spark.range(0, 4000, numPartitions=4).selectExpr("id", "repeat('y', 50) as payload")
    spark.sparkContext.setLocalProperty(INJECT_FAILURE, "afterPrepare:0")
    sink(frame, 0)
    spark.sparkContext.setLocalProperty(INJECT_FAILURE, None)
    sink(spark.range(4000, 5000, numPartitions=4).selectExpr("id", "repeat('y', 50) as payload"), 1)
    ids = read_table(path).column("id").to_pylist()
    print(json.dumps({"ids": len(ids), "distinct": len(set(ids)), "min": min(ids), "max": max(ids),
                      "lanes": lanes_of(path), "batch_lanes": [m.lanes for m in sink.history],
                      "log": logged.lines}),
          flush=True)
    spark.stop()
    return 0


def locality(args) -> int:
    import pyarrow as pa
    import sparkjournal
    from sparkjournal.events.node import executor_id
    spark = session("local-cluster[2,2,1024]", **{"spark.locality.wait": "30s"})
    path = os.path.join(args.data, "node-{executor}")
    sink = sparkjournal.JournalSink(path, txnAppId="locality")
    for batch in range(2):
        sink(spark.range(batch * 2000, (batch + 1) * 2000, numPartitions=4)
             .selectExpr("id", "repeat('z', 20) as payload"), batch)
    frame = sparkjournal.read(spark, path)

    def tag_reader(batches):
        # Pipelined into the reading task (no shuffle): the executor running
        # this is the executor that read the rows.
        reader = executor_id()
        for batch in batches:
            yield pa.RecordBatch.from_arrays(
                [batch.column("id"), pa.array([reader] * batch.num_rows, pa.string())],
                names=["id", "reader"])

    # Without preferences Spark shuffles its offers: three reads of ~4 lanes on
    # 2 executors would all land right by chance once in hundreds of runs.
    reads = [frame.mapInArrow(tag_reader, "id long, reader string").collect() for _ in range(3)]
    print(json.dumps({"partitions": frame.rdd.getNumPartitions(),
                      "reads": [[[row.id, row.reader] for row in rows] for rows in reads]}),
          flush=True)
    spark.stop()
    return 0


MODES = {"stream": stream, "cluster": cluster, "locality": locality}


def main() -> int:
    logging.basicConfig(level=logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=tuple(MODES))
    parser.add_argument("--data", required=True)
    parser.add_argument("--sink", default="foreachBatch", choices=("foreachBatch", "format", "smallBatches", "python"))
    parser.add_argument("--until", type=int, default=0)
    args = parser.parse_args()
    started = time.monotonic()
    code = MODES[args.mode](args)
    print(f"DONE in {time.monotonic() - started:.1f}s", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
