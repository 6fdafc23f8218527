"""A Spark driver for the multi-host bed: runs a list of steps in one
SparkSession and prints one JSON line with each step's result or error.

    python bed_driver.py --journal events --steps '[{"do": "stream", "batches": 4}, {"do": "read"}]'

It is started by the bed (cluster_bed.ClusterBed.run_driver) inside the edge
namespace or one host's, and builds its SparkSession from the bed's confs
(SJ_BED_CONF, plus any ``--conf key=value``). The journal is ``--journal NAME``
under the bed's node root (the same path on every host, each host's own
disk); its commit log and checkpoints live in the bed's shared folder. Event
ids are the rate source's values plus the step's ``offset``: batch ``b`` of a
stream of ``rows`` per batch holds ids ``offset + b*rows .. offset +
(b+1)*rows - 1``, so the ids a complete read must return follow from the
commit log alone.

Steps (``do``):
  stream       {"sink": "foreachBatch"|"format", "batches": N, "rows": R,
                "partitions": P, "query": name, "offset": O,
                "writer": "auto"|"python"|"jvm" (foreachBatch's, default auto)}: run until N
               batches of the query are decided (resuming from its
               checkpoint), report each batch's latency; with "forever": true
               it runs until killed (prints "QUERY <id>" once the query runs).
  write        {"start": S, "count": C}: df.write.format("sparkjournal") append
  read         {"allowPartial": bool}: sparkjournal.read, the ids it returned
  format_read  spark.read.format("sparkjournal"): its count or error
  where_read   spark.read.format("sparkjournal") with each row's host as read and
               as the task that read it saw it (run with the JVM connector's jar)
  stream_read  spark.readStream.format("sparkjournal") (availableNow): its rows or error
  follow       {"name": N, "maxRows": R}: spark.readStream.format("sparkjournal")
               (availableNow) into a parquet sink, both kept under the shared
               folder by name (a later step or driver with the same name resumes
               from its checkpoint): every id the sink holds, the rows this run
               read, and each row's host as read and as the task that read it saw it
  delete       {"predicate": SQL}: sparkjournal.delete's report or error
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import time
import traceback

ROWS = 1000


def session(extra: list[str]):
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.appName("sparkjournal-bed-driver")
    conf = {**json.loads(os.environ["SJ_BED_CONF"]), **dict(c.split("=", 1) for c in extra)}
    for key, value in conf.items():
        builder = builder.config(key, value)
    if "spark.jars" not in conf:
        import sparkjournal
        builder = sparkjournal.configure(builder)        # as spark-submit --jars "$(sparkjournal jar)"
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Bed:
    def __init__(self, spark, base: str, node_root: str, journal: str):
        self.spark = spark
        self.path = os.path.join(node_root, journal)
        self.log = os.path.join(base, "shared", journal, "commits")
        self.checkpoints = os.path.join(base, "shared", journal, "checkpoints")

    def stream(self, step: dict) -> dict:
        from sparkjournal import JournalSink
        from sparkjournal.events.commit_log import CommitLog
        rows, batches = step.get("rows", ROWS), step.get("batches", 3)
        name = step.get("query", "events")
        events = (self.spark.readStream.format("rate-micro-batch")
                  .option("rowsPerBatch", rows).option("numPartitions", step.get("partitions", 4))
                  .load().selectExpr(f"value + {step.get('offset', 0)} as id",
                                     "cast(value % 97 as string) as key",
                                     "repeat('x', 64) as payload"))
        writer = (events.writeStream.trigger(processingTime="0 seconds")
                  .option("checkpointLocation", os.path.join(self.checkpoints, name)))
        sink = None
        if step.get("sink", "foreachBatch") == "foreachBatch":
            sink = JournalSink(self.path, commitLog=self.log,
                               writer=step.get("writer", "auto"))
            query = writer.foreachBatch(sink).start()
        else:
            query = writer.format("sparkjournal").option("commitLog", self.log).start(self.path)
        print(f"QUERY {query.id}", flush=True)
        log = CommitLog(self.log)
        started = time.monotonic()
        try:
            while query.isActive and (step.get("forever") or len(log.batches(query.id)) < batches):
                query.awaitTermination(0.2)
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
        finally:
            progress = query.recentProgress
            query.stop()
        latencies = [p["durationMs"].get("triggerExecution", 0) for p in progress
                     if p["numInputRows"]]
        result = {"query": query.id, "rows": rows, "decided": log.batches(query.id),
                  "seconds": round(time.monotonic() - started, 1),
                  "batch_ms": latencies}
        if sink is not None:
            history = [m for m in sink.history if not m.skipped]
            result.update(jvm_writer=bool(sink.jvm),
                          commit_log_ms=[round(m.commit_log_ms, 2) for m in history],
                          job_ms=[round(m.job_ms, 1) for m in history],
                          lanes=sorted({lane for m in history for lane in m.lanes}))
        if latencies:
            result["median_batch_ms"] = statistics.median(latencies)
        return result

    def write(self, step: dict) -> dict:
        start, count = step.get("start", 0), step.get("count", ROWS)
        frame = self.spark.range(start, start + count, numPartitions=4).selectExpr(
            "id", "cast(id % 97 as string) as key", "repeat('x', 64) as payload")
        frame.write.format("sparkjournal").option("commitLog", self.log).mode("append").save(self.path)
        return {"written": count}

    def read(self, step: dict) -> dict:
        from sparkjournal.spark.locality import located_read
        options = {"commitLog": self.log}
        if step.get("allowPartial"):
            options["allowPartialRead"] = "true"
        frame, plan = located_read(self.spark, self.path, columns=["id", "_host"], **options)
        rows = frame.collect()
        return {"ids": sorted(row.id for row in rows), "hosts": sorted({row._host for row in rows}),
                "lanes": len(plan.lanes), "left_out": plan.left_out_line(),
                "forgotten": plan.forgotten.events, "waited_s": plan.view.waited_s}

    def format_read(self, step: dict) -> dict:
        frame = self.spark.read.format("sparkjournal").option("commitLog", self.log).load(self.path)
        return {"count": frame.count()}

    def where_read(self, step: dict) -> dict:
        import socket
        from pyspark.sql import functions
        ran_on = functions.udf(lambda _id: socket.gethostname(), "string")
        frame = (self.spark.read.format("sparkjournal").option("commitLog", self.log).load(self.path)
                 .select("id", "_host", ran_on("id").alias("ran_on")))
        from sparkjournal.spark.connector import reads_through_jvm
        jvm_scan = reads_through_jvm(frame)
        rows = frame.collect()
        return {"ids": sorted(row.id for row in rows), "hosts": sorted({row._host for row in rows}),
                "misplaced": sum(1 for row in rows if row._host != row.ran_on),
                "jvm_scan": jvm_scan}

    def stream_read(self, step: dict) -> dict:
        name = os.path.join(self.checkpoints, f"follow-{time.time_ns()}")
        query = (self.spark.readStream.format("sparkjournal").option("commitLog", self.log)
                 .load(self.path).writeStream.format("memory").queryName("followed")
                 .option("checkpointLocation", name).trigger(availableNow=True).start())
        query.awaitTermination()
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        return {"count": self.spark.table("followed").count()}

    def follow(self, step: dict) -> dict:
        import socket
        from pyspark.sql import functions
        ran_on = functions.udf(lambda _id: socket.gethostname(), "string")
        work = os.path.join(self.checkpoints, "follow", step["name"])
        reader = self.spark.readStream.format("sparkjournal").option("commitLog", self.log)
        if step.get("maxRows"):
            reader = reader.option("maxRowsPerTrigger", str(step["maxRows"]))
        query = (reader.load(self.path).select("id", "_host", ran_on("id").alias("ran_on")).writeStream
                 .format("parquet").option("path", os.path.join(work, "out"))
                 .option("checkpointLocation", os.path.join(work, "checkpoint"))
                 .trigger(availableNow=True).start())
        query.awaitTermination()
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        progress = [p for p in query.recentProgress if p["numInputRows"]]
        rows = self.spark.read.parquet(os.path.join(work, "out")).collect()
        return {"ids": sorted(row.id for row in rows), "hosts": sorted({row._host for row in rows}),
                "misplaced": sum(1 for row in rows if row._host != row.ran_on),
                "read_now": sum(p["numInputRows"] for p in progress), "batches": len(progress),
                "jvm_stream": all(p["sources"][0]["description"].startswith("sparkjournal stream")
                                  for p in progress)}

    def delete(self, step: dict) -> dict:
        import dataclasses
        import sparkjournal
        report = sparkjournal.delete(self.spark, self.path, step["predicate"], commitLog=self.log)
        return dataclasses.asdict(report)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", required=True, help="a JSON list of steps")
    parser.add_argument("--journal", default="events", help="the journal's name on the bed")
    parser.add_argument("--conf", action="append", default=[], help="a Spark conf key=value")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    spark = session(args.conf)
    base = os.environ["SJ_BED_BASE"]
    bed = Bed(spark, base, os.environ.get("SJ_BED_NODE_ROOT", os.path.join(base, "node")),
              args.journal)
    results = []
    try:
        for step in json.loads(args.steps):
            started = time.monotonic()
            try:
                result = getattr(bed, step["do"])(step)
            except Exception as error:                    # the test judges the message
                traceback.print_exc()
                result = {"error": f"{type(error).__name__}: {error}"}
            result.update(do=step["do"], wall_s=round(time.monotonic() - started, 2))
            results.append(result)
    finally:
        print("RESULT " + json.dumps(results), flush=True)
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
