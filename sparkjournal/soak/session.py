"""The SparkSession every soak driver uses: no UI, few shuffle partitions, the
checkpoint manager that does not fork per file, this Python on the executors."""
from __future__ import annotations

import sys

SOAK_CONF = {
    "spark.ui.enabled": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.streaming.checkpointFileManagerClass":
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "spark.pyspark.python": sys.executable,
    "spark.executor.memory": "768m",
    "spark.ui.showConsoleProgress": "false",
}


def soak_session(master: str, name: str):
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.master(master).appName(name)
    for key, value in SOAK_CONF.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # Explicit: PySpark finds pyspark_* modules by scanning sys.path, which misses
    # an editable install's modules when the driver runs outside the checkout.
    from .. import register
    register(spark)
    return spark


def exit_status(query) -> int:
    """A child driver's exit status once its query ended: 1 (with the error on
    stdout for the soak's log) if it failed, else 0."""
    if query.exception():
        print(f"FAILED {query.exception()}", flush=True)
        return 1
    return 0
