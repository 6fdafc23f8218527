"""The journal's event schema and how a stream may evolve it.

The first batch written fixes the schema (kept in the commit log, schema.arrow).
A later batch must carry every column with the same type; it may add columns if
they are nullable (older records then read back with nulls there) and may relax
a column to nullable. Anything else fails before a task runs, naming the columns.
Timestamps compare without their time zone (Spark's session zone is only how
they are shown).
"""
from __future__ import annotations

import pyarrow as pa

from ..errors import SparkJournalError
from ..events.deletions import ROW_COLUMN
from ..events.read_columns import METADATA

# Names no events column may take (EVENTS.md, "Reading: the columns"): a read
# returns the metadata columns beside the events columns, and __sj_row is a
# compacted record's column of original positions.
RESERVED = (*METADATA.names, ROW_COLUMN)


class SchemaMismatchError(SparkJournalError):
    """A batch's schema cannot be written into this journal."""


def session_timezone(df) -> str:
    """The session time zone Spark converts ``df``'s timestamps to Arrow with."""
    return df.sparkSession.conf.get("spark.sql.session.timeZone")


def spark_to_arrow(struct_type, timezone: str = "UTC") -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema
    return to_arrow_schema(struct_type, timezone=timezone)


def _comparable(data_type: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(data_type):
        return pa.timestamp(data_type.unit)
    return data_type


def evolve(stored: pa.Schema | None, incoming: pa.Schema, where: str) -> pa.Schema | None:
    """The schema to store after accepting ``incoming``: None if unchanged.
    Raises SchemaMismatchError naming every offending column; a column named
    like a metadata column or ``__sj_row`` (RESERVED) is refused this way
    too, whether it would fix the schema or add to it. The sink and the batch
    write call this before any task runs, so a refused batch writes nothing."""
    incoming = incoming.remove_metadata()
    reserved = [name for name in incoming.names if name in RESERVED]
    if reserved:
        raise SchemaMismatchError(
            f"{where}: column(s) {', '.join(reserved)} take names reserved for the "
            f"journal's own columns ({', '.join(RESERVED)}: the metadata columns a read "
            f"returns beside the events, and compaction's original positions). Rename them (e.g. "
            f"df.withColumnRenamed('{reserved[0]}', 'event{reserved[0]}')) or drop them; "
            f"nothing of this batch was written")
    if stored is None:
        return incoming
    problems = []
    by_name = {field.name: field for field in incoming}
    missing = [f.name for f in stored if f.name not in by_name]
    if missing:
        problems.append(f"missing column(s) {', '.join(missing)}")
    for field in stored:
        new = by_name.get(field.name)
        if new is not None and _comparable(new.type) != _comparable(field.type):
            problems.append(f"column {field.name} is {new.type}, the journal holds {field.type}")
    known = set(stored.names)
    added = [f for f in incoming if f.name not in known]
    required = [f.name for f in added if not f.nullable]
    if required:
        problems.append(f"new column(s) {', '.join(required)} are not nullable (older "
                        f"events have no value there; add them as nullable)")
    if problems:
        raise SchemaMismatchError(
            f"{where}: the batch's schema does not match the journal's: {'; '.join(problems)}. "
            f"Journal schema: {_describe(stored)}; batch schema: {_describe(incoming)}. Write "
            f"to a new journal path, or cast the batch to the journal's schema")
    relaxed = [f for f in stored if f.nullable is False and by_name[f.name].nullable]
    if not added and not relaxed:
        return None
    fields = [f.with_nullable(True) if f in relaxed else f for f in stored] + added
    return pa.schema(fields)


def _describe(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} {f.type}{'' if f.nullable else ' not null'}" for f in schema)
