"""The options of a read (``spark.read`` / ``spark.readStream`` /
``sparkjournal.read``), parsed and validated on the driver so a typo fails
before any task runs. The read options are defined in config.READ; everything
that is not one is a write option (config.SINK: only commitLog makes sense in
a read) or a journal option (config.JOURNAL).

A micro-batch takes whole stored records, and at least one, so a limit smaller
than one record still makes progress.
"""
from __future__ import annotations

import dataclasses
import datetime

from ..config import READ
from ..errors import ConfigError, SparkJournalError
from ..events.pruning import Comparison, Predicate
from ..format.constants import METADATA_COLUMNS
from .sink import split_options


@dataclasses.dataclass(frozen=True)
class ReadOptions:
    path: str
    commit_log: str | None
    journal: dict
    skip_corrupt: bool = False
    allow_partial: bool = False
    starting_batch_id: int | None = None
    starting_time: datetime.datetime | None = None
    max_rows: int | None = None
    max_bytes: int | None = None
    missing_host_wait_s: float = 5.0

    def start_predicate(self) -> Predicate:
        """The starting point as a pruning predicate (exact per record)."""
        found = []
        if self.starting_batch_id is not None:
            found.append(Comparison(METADATA_COLUMNS.BATCH_ID, ">=", self.starting_batch_id))
        if self.starting_time is not None:
            found.append(Comparison(METADATA_COLUMNS.COMMIT_TIME, ">=", self.starting_time))
        return Predicate(tuple(found))


def parse_read_options(options) -> ReadOptions:
    options = dict(options)
    path = options.get("path")
    if not path:
        raise SparkJournalError("a sparkjournal read needs a path: .load(path) or .option('path', ...)")
    read = {option.name: option.default for option in READ}
    rest = {}
    for key, value in options.items():
        option = READ.find(key)
        if option is not None:
            if value is not None:                     # None: not given (a keyword's default)
                read[option.name] = option.parse(value)
        else:
            rest[key] = value
    sink, journal = split_options(rest)
    if "txnAppId" in sink:
        raise ConfigError("txnAppId", sink["txnAppId"], "nothing in a read: it is a write "
                          "option, and a read sees every writer's events")
    return ReadOptions(
        path, sink.get("commitLog"), journal,
        skip_corrupt=read["skipCorrupt"], allow_partial=read["allowPartialRead"],
        starting_batch_id=read["startingBatchId"], starting_time=read["startingTimestamp"],
        max_rows=read["maxRowsPerTrigger"], max_bytes=read["maxBytesPerTrigger"],
        missing_host_wait_s=read["missingHostWait"] / 1e9)
