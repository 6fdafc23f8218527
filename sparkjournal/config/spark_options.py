"""The options of a write (the sink: ``JournalSink`` and ``.format("sparkjournal")``
writers) and of a read (``spark.read`` / ``spark.readStream`` /
``sparkjournal.read``), defined once (option.py). Everything else a write or a
read is given is a journal option (journal_options.py), except the options
Spark itself passes to every data source (SPARK_OWN). spark/sink.py and
spark/read_options.py parse with these; the options table and the JVM
connector's option names come from them.
"""
from __future__ import annotations

from .option import Option, OptionTable
from .values import Flag, Instant, Size, Text, Whole, not_blank, one_path_segment

LOCAL_SMALL_BATCH_ROWS = 10_000   # smallBatchRows when unset in local mode
SPARK_OWN = ("path", "checkpointlocation")    # Spark passes these to data sources (lower case)

SINK = OptionTable(
    Option("txnAppId", Text("a name of letters, digits, '-', '_' or '.' (no '/')",
                            one_path_segment), None,
           "the writer's name in the commit log; set it when several checkpoints must count "
           "as one writer (as Delta's option)", shown_default="the streaming query id"),
    Option("commitLog", Text("a local path or a URI pyarrow.fs supports (hdfs://, s3://, gs://)",
                             not_blank), None,
           "where the driver's decisions live (reads use it too); on a cluster, put it on "
           "fault-tolerant storage next to the checkpoint", shown_default="`<path>/_commits`"),
    Option("smallBatchRows", Whole(0), None,
           "micro-batches of at most this many rows are collected to the driver as Arrow and "
           "written there, into a lane of the driver's node root, through the same two-phase "
           "commit: no Python job on the executors, ~2x faster at 1k rows per batch; only "
           "where readers see the driver's root (local mode, or a driver on a journal node), "
           "so on a cluster it is off unless set; the query's first batch logs the value in "
           "effect; the foreachBatch sink only",
           shown_default=f"{LOCAL_SMALL_BATCH_ROWS} in local mode (master local or local[...]), "
                         f"else 0 (off)"),
)

READ = OptionTable(
    Option("skipCorrupt", Flag(), False,
           "leave a damaged file out of the read and report it, instead of failing"),
    Option("allowPartialRead", Flag(), False,
           "true: a read that cannot reach a node holding committed events reads the rest and "
           "logs exactly which hosts, lanes and batches it left out, instead of failing"),
    Option("startingBatchId", Whole(0), None, "only events of batches with this id or later",
           accepted="a batch id (a whole number from 0 up)"),
    Option("startingTimestamp", Instant(), None, "only events committed at or after this time"),
    Option("maxRowsPerTrigger", Whole(1), None,
           "streaming: at most about this many rows per micro-batch"),
    Option("maxBytesPerTrigger", Size(example="64m"), None,
           "streaming: at most about this many bytes per micro-batch"),
)
