"""The Spark layer: sinks and readers over journals (imports pyspark).

Importing it in a driver puts the JVM connector where the next Spark session
finds it (jvm_install.py); Spark's executors and Python workers do not."""
import sys

from ..events.node import executor_id


def _in_spark_worker() -> bool:
    """A Python process Spark started: an executor's worker, or a driver-side
    data source planner (``python -m pyspark.sql.worker.*``), never a driver."""
    main = getattr(sys.modules.get("__main__"), "__spec__", None)
    return (bool({"pyspark.worker", "pyspark.daemon", "pyspark.worker_util"} & set(sys.modules))
            or (main is not None and (main.name or "").startswith("pyspark.")))


if executor_id() == "driver" and not _in_spark_worker():
    from .jvm_install import ensure as _ensure_jvm_connector
    _ensure_jvm_connector()
