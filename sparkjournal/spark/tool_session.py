"""The SparkSession sparkjournal's own tools start (benchmarks, the soak's drivers):
no UI and no console progress bars (they would interleave with the tools' own
progress lines on stderr), two shuffle partitions, the checkpoint manager that does not fork a
process per file (spark-integration.md: ~33 ms -> ~9 ms per checkpoint write),
this Python on the executors, and the data source registered explicitly
(PySpark's scan for pyspark_* modules misses an editable install run outside
the checkout)."""
from __future__ import annotations

import sys

TOOL_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.streaming.checkpointFileManagerClass":
        "org.apache.spark.sql.execution.streaming.checkpointing.FileSystemBasedCheckpointFileManager",
    "spark.pyspark.python": sys.executable,
}


def tool_session(master: str, name: str, **conf):
    """The session, with ``conf`` (Spark keys) on top of TOOL_CONF."""
    from pyspark.sql import SparkSession
    from .connector import configure
    builder = SparkSession.builder.master(master).appName(name)
    for key, value in {**TOOL_CONF, **conf}.items():
        builder = builder.config(key, value)
    spark = (builder if "spark.jars" in conf else configure(builder)).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
