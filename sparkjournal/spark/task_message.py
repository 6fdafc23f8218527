"""What a task of the two-phase commit is, and what it tells the driver.

``TaskIdentity``: which query, batch, partition and attempt a task writes for,
as Spark's TaskContext says (lane_writer.py); it names the transaction's XID.

``TaskMessage``: a task's commit message, the protocol's central datum. The
task PREPAREs its transaction, then returns this message; the driver's
decision (committer.py) names exactly the transactions of the messages it
received. It crosses processes as plain JSON values only - a row of
MESSAGE_SCHEMA (the foreachBatch sink's ``mapInArrow``) or the dict of
``to_json`` (the DataSource writer's commit message) - and ``from_json``
refuses anything that is not one, naming what is wrong.
"""
from __future__ import annotations

import dataclasses

import pyarrow as pa

from ..errors import SparkJournalError
from ..format.constants import ENTRY_TX as TX


@dataclasses.dataclass(frozen=True)
class TaskIdentity:
    query: str
    batch: int
    partition: int             # -1: outside Spark (tools, tests)
    attempt: int               # Spark's attempt number of this partition's task
    task: int                  # Spark's task attempt id; -1 outside Spark
    inject: str | None = None  # fault injection for tests (lane_writer.INJECT_FAILURE)
    epoch: int = 0             # the batch's write epoch (format/COMMIT_LOG.md)


@dataclasses.dataclass(frozen=True)
class TaskMessage:
    query: str
    batch: int
    node: str                  # the node id of the root written (events/node.py)
    host: str
    root: str                  # the node root as the task saw it
    lane: str
    tx: int | None             # None: nothing written, the DROP policy dropped ``dropped`` rows
    records: int
    rows: int
    bytes: int
    partition: int
    attempt: int
    write_ms: float
    prepare_ms: float
    dropped: int
    epoch: int                 # the batch's write epoch its XID carries (COMMIT_LOG.md)

    @property
    def where(self) -> str:
        """``host:root/lane``, as the batch's log line names lanes."""
        return f"{self.host}:{self.root}/{self.lane}"

    def decided(self) -> dict:
        """This transaction as the decision records it (commit_log.Decision.txs)."""
        return {TX.NODE: self.node, TX.HOST: self.host, TX.ROOT: self.root, TX.LANE: self.lane,
                TX.TX: self.tx, TX.RECORDS: self.records, TX.ROWS: self.rows, TX.BYTES: self.bytes}

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data) -> "TaskMessage":
        """The message of ``data`` (a dict of plain values, as to_json made it);
        SparkJournalError naming the field when it is not one."""
        if not isinstance(data, dict) or set(data) != set(_TYPES):
            raise SparkJournalError(f"not a sparkjournal task message (fields {sorted(_TYPES)}): "
                                    f"{data!r}")
        for name, accepted in _TYPES.items():
            value = data[name]
            if not (isinstance(value, accepted) and not isinstance(value, bool)):
                raise SparkJournalError(f"task message field {name}={value!r} is not "
                                        f"{' or '.join(t.__name__ for t in accepted)}: {data!r}")
        return cls(**{name: float(value) if float in _TYPES[name] else value
                      for name, value in data.items()})


_PYTHON = {"str": (str,), "int": (int,), "int | None": (int, type(None)), "float": (float, int)}
_ARROW = {"str": pa.string(), "int": pa.int64(), "int | None": pa.int64(), "float": pa.float64()}
_TYPES = {field.name: _PYTHON[field.type] for field in dataclasses.fields(TaskMessage)}
MESSAGE_SCHEMA = pa.schema([(field.name, _ARROW[field.type])
                            for field in dataclasses.fields(TaskMessage)])


def message_ddl() -> str:
    """MESSAGE_SCHEMA as Spark's DDL, for ``mapInArrow``."""
    names = {"string": "string", "int64": "long", "double": "double"}
    return ", ".join(f"{f.name} {names[str(f.type)]}" for f in MESSAGE_SCHEMA)
