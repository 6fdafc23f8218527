"""PySpark finds top-level ``pyspark_<name>`` modules and registers their
``DefaultSource``: ``spark.read.format("sparkjournal")`` and
``df.write.format("sparkjournal")`` work with no register call."""
from sparkjournal.spark.datasource import JournalDataSource as DefaultSource

__all__ = ["DefaultSource"]
