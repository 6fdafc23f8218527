"""The Spark layer: sinks and readers over journals (imports pyspark).

Importing it in a driver puts the JVM connector where the next Spark session
finds it (jvm_install.py); Spark's executors and Python workers do not."""
import sys

from ..events.node import executor_id

if executor_id() == "driver" and not ({"pyspark.worker", "pyspark.daemon"} & set(sys.modules)):
    from .jvm_install import ensure as _ensure_jvm_connector
    _ensure_jvm_connector()
