"""sparkjournal: a durable append-only journal for Apache Spark.

    from sparkjournal import JournalSink
    events.writeStream.foreachBatch(JournalSink("/var/lib/sparkjournal/events")).start()
    df = sparkjournal.read(spark, "/var/lib/sparkjournal/events")   # each lane on its node
    sparkjournal.delete(spark, "/var/lib/sparkjournal/events", "key = 'x'")

    from sparkjournal import Journal, JournalRoot
    with Journal.open("/var/lib/sparkjournal/events/lane-000") as journal: ...
"""
from .config import JournalConfig, load_config
from .errors import (ConfigError, CorruptJournalError, FormatVersionError, JournalClosedError,
                     JournalFullError, JournalIOError, JournalLockedError, LockSupportError,
                     SparkJournalError, TransactionError)

_LAZY = {"Journal": ".journal.journal", "JournalSnapshot": ".journal.journal",
         "JournalRoot": ".journal.root", "JournalSink": ".spark.sink",
         "JournalDataSource": ".spark.datasource", "read_table": ".events.visible_events",
         "read": ".spark.locality", "delete": ".spark.delete",
         "configure": ".spark.connector", "jar_path": ".spark.connector"}


def register(spark) -> None:
    """Makes ``format("sparkjournal")`` work on a running session: adds the JVM
    connector to it where it lacks it (spark/connector.py: the name is then
    the JVM source's, which reads itself and writes through the Python
    source), and registers the Python data source explicitly where the
    session has not found it already through the top-level
    ``pyspark_sparkjournal`` module."""
    from .spark.connector import attach
    from .spark.datasource import JournalDataSource
    attach(spark)
    try:
        if spark._jsparkSession.sessionState().dataSourceManager().dataSourceExists(
                JournalDataSource.name()):
            return
    except Exception:                           # noqa: BLE001 - Connect, another Spark: register
        pass
    try:
        spark.dataSource.register(JournalDataSource)
    except Exception as error:                  # pyspark's AnalysisException, by its class
        if "DATA_SOURCE_ALREADY_EXISTS" not in str(error):
            raise


def __getattr__(name):
    # The journal layer pulls in pyarrow and the C core; config and errors do not.
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(name)


__all__ = ["JournalSink", "JournalDataSource", "read_table", "read", "delete", "register", "configure",
           "jar_path", "Journal", "JournalSnapshot", "JournalRoot", "JournalConfig", "load_config",
           "ConfigError", "CorruptJournalError", "FormatVersionError", "JournalClosedError",
           "JournalFullError", "JournalIOError", "JournalLockedError", "LockSupportError", "SparkJournalError", "TransactionError"]
