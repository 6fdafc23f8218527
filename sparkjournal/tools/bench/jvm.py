"""The JVM reader in the read benchmarks (``bench read``, ``bench maintenance``'s
paged read).

With the connector's jar on the session's classpath (``spark.jars``: connector.py's
cached jar), ``spark.read.format("sparkjournal")`` is the JVM batch reader
(columnar, pruned, filters pushed); the Python data source is registered beside
it as ``sparkjournal-python`` so that its rows stay measurable in the same run.
Without a jar (``connector.jar_unavailable()`` says why) the name means the
Python source, and every JVM row is a skipped row saying
"no JVM reader: <reason>".
"""
from __future__ import annotations

from ...spark.datasource import JournalDataSource
from ...spark.tool_session import tool_session
from .report import skipped

JVM_FORMAT = "sparkjournal"
PYTHON_ALIAS = "sparkjournal-python"


class PythonJournalSource(JournalDataSource):
    """The Python data source under a name of its own, beside the JVM reader."""

    @classmethod
    def name(cls) -> str:
        return PYTHON_ALIAS


class JvmBench:
    """The benchmark's session, with the JVM reader when there is one.

    ``missing``: why there is no JVM reader ("" when there is one);
    ``python_format``: the format name that reads through the Python source."""

    def __init__(self, master: str, name: str, log):
        from ...spark import connector
        self.missing = connector.jar_unavailable() or ""
        conf = {} if self.missing else {"spark.jars": connector.jar_path()}
        self.spark = tool_session(master, name, **conf)
        if self.missing:
            self.python_format = JVM_FORMAT
            log(f"no JVM reader: {self.missing}")
        else:
            self.spark.dataSource.register(PythonJournalSource)
            self.python_format = PYTHON_ALIAS
            log(f"JVM reader loaded from {conf['spark.jars']}; the Python source as "
                f"{PYTHON_ALIAS!r}")

    @property
    def loaded(self) -> bool:
        return not self.missing

    def python(self, schema: str | None = None):
        """The Python source's reader (a user schema if given)."""
        reader = self.spark.read.format(self.python_format)
        return reader.schema(schema) if schema else reader

    def jvm(self):
        return self.spark.read.format(JVM_FORMAT)

    def no_jvm(self, name: str, target: float, target_of: str = "ratio"):
        """The skipped row ``name``: no JVM reader in this Spark session."""
        return skipped(name, "rows/s", target, f"no JVM reader: {self.missing}", target_of)
