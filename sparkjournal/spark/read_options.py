"""The options of a read (``spark.read`` / ``spark.readStream`` /
``sparkjournal.read``), parsed and validated on the driver so a typo fails
before any task runs. Everything that is not a read option is a journal option
(config.py validates those).

Each option's default, accepted values and meaning are in ``READ_OPTION_DOCS``
(and ``commitLog`` in sink.SINK_OPTION_DOCS); ``sparkjournal options
--markdown`` prints them as the README's table.

A micro-batch takes whole stored records, and at least one, so a limit smaller
than one record still makes progress.
"""
from __future__ import annotations

import dataclasses
import datetime

from ..config import parse_bool, parse_int, parse_size
from ..errors import ConfigError, SparkJournalError
from ..events.pruning import Comparison, Predicate
from .sink import split_options

READ_OPTIONS = ("skipCorrupt", "allowPartialRead", "startingBatchId", "startingTimestamp",
                "maxRowsPerTrigger", "maxBytesPerTrigger")
# option -> (default, what it accepts, what it does)
READ_OPTION_DOCS = {
    "skipCorrupt": ("false", "true or false",
                    "leave a damaged file out of the read and report it, instead of failing"),
    "allowPartialRead": ("false", "true or false",
                         "true: a read that cannot reach a node holding committed events reads "
                         "the rest and logs exactly which hosts, lanes and batches it left out, "
                         "instead of failing"),
    "startingBatchId": ("–", "a batch id (a whole number from 0 up)",
                        "only events of batches with this id or later"),
    "startingTimestamp": ("–", "ISO 8601 (2026-11-21T08:00:00Z) or milliseconds since the epoch",
                          "only events committed at or after this time"),
    "maxRowsPerTrigger": ("–", "a whole number from 1 up",
                          "streaming: at most about this many rows per micro-batch"),
    "maxBytesPerTrigger": ("–", "a size such as 64m, 490k, 1g or a number of bytes",
                           "streaming: at most about this many bytes per micro-batch"),
}


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

    def start_predicate(self) -> Predicate:
        """The starting point as a pruning predicate (exact per record)."""
        found = []
        if self.starting_batch_id is not None:
            found.append(Comparison("_batch_id", ">=", self.starting_batch_id))
        if self.starting_time is not None:
            found.append(Comparison("_commit_time", ">=", self.starting_time))
        return Predicate(tuple(found))


def parse_read_options(options) -> ReadOptions:
    options = dict(options)
    path = options.get("path")
    if not path:
        raise SparkJournalError("a sparkjournal read needs a path: .load(path) or .option('path', ...)")
    lowered = {k.lower(): k for k in READ_OPTIONS}
    read, rest = {}, {}
    for key, value in options.items():
        if key.lower() in lowered:
            read[lowered[key.lower()]] = value
        else:
            rest[key] = value
    sink, journal = split_options(rest)
    if "txnAppId" in sink:
        raise ConfigError("txnAppId", sink["txnAppId"], "nothing in a read: it is a write "
                          "option, and a read sees every writer's events")
    return ReadOptions(
        path, sink.get("commitLog"), journal,
        skip_corrupt=_parsed(parse_bool, "skipCorrupt", read.get("skipCorrupt", False)),
        allow_partial=_parsed(parse_bool, "allowPartialRead", read.get("allowPartialRead", False)),
        starting_batch_id=_whole_number("startingBatchId", read.get("startingBatchId"), 0),
        starting_time=_timestamp(read.get("startingTimestamp")),
        max_rows=_whole_number("maxRowsPerTrigger", read.get("maxRowsPerTrigger"), 1),
        max_bytes=(_parsed(parse_size, "maxBytesPerTrigger", read["maxBytesPerTrigger"])
                   if read.get("maxBytesPerTrigger") is not None else None))


def _parsed(parse, name: str, value):
    try:
        return parse(name, value)
    except ConfigError:
        raise ConfigError(name, value, READ_OPTION_DOCS[name][1]) from None


def _whole_number(name: str, value, least: int) -> int | None:
    """``value`` as a whole number of at least ``least``; None when not given."""
    if value is None:
        return None
    return _parsed(lambda key, text: parse_int(key, text, least), name, value)


def _timestamp(value) -> datetime.datetime | None:
    """ISO 8601 (naive means UTC) or milliseconds since the epoch."""
    if value is None:
        return None
    text = str(value).strip()
    try:
        if text.isdigit():
            return datetime.datetime.fromtimestamp(int(text) / 1e3, datetime.timezone.utc)
        parsed = datetime.datetime.fromisoformat(text)
    except (ValueError, OverflowError) as error:
        raise ConfigError("startingTimestamp", value,
                          READ_OPTION_DOCS["startingTimestamp"][1]) from error
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)
