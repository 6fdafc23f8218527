"""Record-level pruning: which stored records a read can skip without opening
their rows.

A journal record of events (event_records.py) is one piece of one batch, so
every metadata column is a constant for the whole record (batch id, commit
time, host, lane, record id), and each piece carries the min/max of its cheap
event columns (numbers, times, short strings) in its schema metadata, written
by the lane writer. A ``Predicate`` is a conjunction of simple comparisons
(column, op, value); ``may_match`` says whether any row of a record could
satisfy it. It must never say False for a record holding a matching row:
pruning only ever skips, so results are identical with and without it
(metadata comparisons are exact per record; event-column ones only exclude
records whose min/max rule them out, and Spark still applies those filters).
"""
from __future__ import annotations

import dataclasses
import datetime
import json
import math
import operator

import pyarrow as pa
import pyarrow.compute as pc

from ..format import strict_json as sj
from ..format.constants import METADATA_COLUMNS, SCHEMA_METADATA
from .read_columns import RECORD_METADATA
from .string_bounds import string_bounds

META_STATS = SCHEMA_METADATA.META_STATS.encode()
SHORT_STRING = 32            # strings of at most this mean length get min/max

OPS = {"=": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
EXACT_COLUMNS = (METADATA_COLUMNS.BATCH_ID, METADATA_COLUMNS.HOST, METADATA_COLUMNS.LANE,
                 METADATA_COLUMNS.RECORD_ID)


def column_stats(batch: pa.RecordBatch) -> bytes:
    """JSON {column: [min, max]} of the columns whose min/max are cheap to
    compute and to compare; times as integers in their own unit. A string
    column whose min or max is not valid UTF-8 gets no entry (EVENTS.md,
    "Statistics"): the write goes on, the record is just never pruned on it."""
    stats = {}
    for field, column in zip(batch.schema, batch.columns):
        kind = field.type
        text = pa.types.is_string(kind) or pa.types.is_large_string(kind)
        if text:
            if column.nbytes > SHORT_STRING * max(1, len(column)) + 8 * len(column):
                continue
        elif not (pa.types.is_integer(kind) or pa.types.is_floating(kind)
                  or pa.types.is_timestamp(kind) or pa.types.is_date(kind)):
            continue
        if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
            column = column.view(pa.int64() if column.type.bit_width == 64 else pa.int32())
        if text:
            try:
                low, high = string_bounds(column)
            except UnicodeDecodeError:
                continue            # a bound that is not UTF-8: no entry (EVENTS.md), no failure
        else:
            bounds = pc.min_max(column)
            low, high = bounds["min"].as_py(), bounds["max"].as_py()
        if low is None or (isinstance(low, float) and not (math.isfinite(low) and math.isfinite(high))):
            continue
        stats[field.name] = [low, high]
    return json.dumps(stats, separators=(",", ":")).encode()


def read_stats(metadata: dict | None) -> dict:
    """{column: [min, max]} of a record, read as JSON.md defines JSON. Stats
    that are refused, and a column's bounds that are not two numbers or two
    strings, are left out: that record (or column) is never pruned, it is read
    - bad stats can cost time, never a row."""
    raw = (metadata or {}).get(META_STATS)
    if not raw:
        return {}
    try:
        stats = sj.loads(raw, "the stats")
    except sj.JsonRefused:
        return {}
    if type(stats) is not dict:
        return {}
    return {column: bounds for column, bounds in stats.items() if _bounds(bounds)}


def _bounds(bounds) -> bool:
    if type(bounds) is not list or len(bounds) != 2:
        return False
    low, high = bounds
    if type(low) is str:
        return type(high) is str
    return type(low) in (int, float) and type(high) in (int, float)


@dataclasses.dataclass(frozen=True)
class Comparison:
    column: str
    op: str                      # one of OPS, or "in"
    value: object                # for "in": a tuple


@dataclasses.dataclass(frozen=True)
class Predicate:
    """A conjunction of comparisons; picklable (it travels in input partitions)."""
    comparisons: tuple = ()

    def __bool__(self) -> bool:
        return bool(self.comparisons)

    def on_metadata(self) -> bool:
        return any(c.column in RECORD_METADATA for c in self.comparisons)

    def may_match(self, metadata: dict, stats: dict, schema: pa.Schema) -> bool:
        """``metadata``: {metadata column: its constant value for the record};
        ``stats``: read_stats of the record; ``schema``: the journal's events schema."""
        for comparison in self.comparisons:
            if comparison.column in RECORD_METADATA:
                value = metadata.get(comparison.column)
                if value is None or not _holds(value, comparison):
                    return False
            elif comparison.column in stats:
                if not _range_may_hold(stats[comparison.column], comparison,
                                       _field_type(schema, comparison.column)):
                    return False
        return True


    def may_match_ranges(self, ranges: dict, constants: dict) -> bool:
        """Whether rows of many records (a page file, page_scan.py) may hold a
        match: ``ranges`` {metadata column: (lowest, highest)} inclusive, in
        the stats' representation (times in us); ``constants`` {metadata
        column: its one value}. Comparisons on other columns never prune here."""
        for comparison in self.comparisons:
            if comparison.column in constants:
                value = constants[comparison.column]
                if value is None or not _holds(value, comparison):
                    return False
            elif comparison.column in ranges:
                kind = RANGE_KINDS.get(comparison.column, pa.int64())
                if not _range_may_hold(ranges[comparison.column], comparison, kind):
                    return False
        return True


RANGE_KINDS = {METADATA_COLUMNS.COMMIT_TIME: pa.timestamp("us", tz="UTC")}


def _holds(value, comparison: Comparison) -> bool:
    target = comparison.value
    if comparison.op == "in":
        return value in target or any(isinstance(t, datetime.datetime) for t in target)
    if isinstance(value, datetime.datetime) != isinstance(target, datetime.datetime):
        return True                              # not comparable here: never prune on it
    if isinstance(target, datetime.datetime) and target.tzinfo is None:
        target = target.astimezone()             # Spark hands session-local naive times
    try:
        return OPS[comparison.op](value, target)
    except TypeError:
        return True


@dataclasses.dataclass(frozen=True)
class _Between:
    """A literal that falls strictly between two stored values (a time finer
    than its column's unit): ``floor`` < literal < ``floor + 1``."""
    floor: int


def _range_may_hold(bounds, comparison: Comparison, kind) -> bool:
    """False only when no value v with low <= v <= high satisfies the
    comparison (EVENTS.md, "Statistics"). A literal between two stored values
    is compared rounded towards keeping the record: ``v < 1.5`` holds for a
    stored 1 iff ``v < 2``, ``v <= 1.5`` iff ``v <= 1``, ``v > 1.5`` iff
    ``v > 1``, ``v >= 1.5`` iff ``v >= 2``; ``=`` and ``in`` with such a
    literal keep the record (a literal not converted exactly prunes nothing).
    On a float column ``>``, ``>=`` and a NaN literal keep the record: the
    bounds leave NaN out, and Spark orders NaN above every number."""
    low, high = bounds
    values = comparison.value if comparison.op == "in" else (comparison.value,)
    try:
        values = [_as_stored(v, kind) for v in values]
    except (TypeError, ValueError, OverflowError):
        return True
    if any(v is None or isinstance(v, _Between) and comparison.op in ("=", "in")
           for v in values):
        return True
    if pa.types.is_floating(kind) and (comparison.op in (">", ">=") or
                                       any(isinstance(v, float) and math.isnan(v) for v in values)):
        return True         # NaN, left out of the bounds, is above every number to Spark
    if comparison.op == "in":
        return any(low <= v <= high for v in values)
    value = values[0]
    if isinstance(value, _Between):
        value = value.floor + (1 if comparison.op in ("<", ">=") else 0)
    return {"=": low <= value <= high, "<": low < value, "<=": low <= value,
            ">": high > value, ">=": high >= value}[comparison.op]


def _field_type(schema: pa.Schema, name: str):
    index = schema.get_field_index(name)
    return schema.field(index).type if index >= 0 else None


_UNITS = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def _as_stored(value, kind):
    """A filter value in the stats' representation of ``kind``; None if the
    two cannot be compared (then the record is kept); a ``_Between`` for a
    time that is no whole number of the column's unit (never rounded here:
    which way is safe depends on the comparison, _range_may_hold)."""
    if kind is None or isinstance(value, bool):
        return None
    if pa.types.is_timestamp(kind):
        if not isinstance(value, datetime.datetime):
            return None
        if value.tzinfo is None:
            value = value.astimezone()               # Spark hands session-local naive times
        micros = (value - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) \
            // datetime.timedelta(microseconds=1)
        stored, fraction = divmod(micros * _UNITS[kind.unit], 1_000_000)
        return _Between(stored) if fraction else stored
    if pa.types.is_date(kind):
        if isinstance(value, datetime.datetime) or not isinstance(value, datetime.date):
            return None
        days = (value - datetime.date(1970, 1, 1)).days
        return days if pa.types.is_date32(kind) else days * 86_400_000
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return value if isinstance(value, str) else None
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return value if isinstance(value, (int, float)) else None
    return None
