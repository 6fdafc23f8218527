"""Honouring a user-specified schema: Spark's idiom for pruning a source that
cannot prune.

    spark.read.format("sparkjournal").schema("key string, amount double").load(path)

PySpark hands the user's schema to ``DataSource.reader(schema)`` (and
``streamReader``) instead of calling ``DataSource.schema()``, and checks every
batch a reader yields against it exactly (names, order, Arrow types,
nullability). So the reader yields exactly those columns (read_columns.py):
any event or metadata columns of the journal, in the order asked. A column the
journal does not have, one asked with another type, or one asked NOT NULL that
may hold nulls fails the read when it is planned, naming the column and the
journal's schema; nothing is read.
"""
from __future__ import annotations

import pyarrow as pa

from ..events.read_columns import UnknownColumnError, full_schema, named


def read_columns(events_schema: pa.Schema, schema) -> pa.Schema | None:
    """The Arrow schema a reader must yield for Spark's ``schema`` (a
    StructType): None when it is the journal's own (all columns), else the
    asked columns as PySpark converts them (timestamps in UTC)."""
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    full = full_schema(events_schema)
    journal = from_arrow_schema(full)
    if schema is None or schema == journal:
        return None
    known = from_arrow_schema(named(events_schema, schema.names, journal.simpleString()))
    for asked, field in zip(schema.fields, known.fields):
        if asked.dataType != field.dataType:
            raise UnknownColumnError(
                f"column {asked.name} is {field.dataType.simpleString()} in this journal, not "
                f"{asked.dataType.simpleString()}: the journal has {journal.simpleString()}")
        if not asked.nullable and field.nullable:
            raise UnknownColumnError(
                f"column {asked.name} is nullable in this journal: ask for it without NOT "
                f"NULL (the journal has {journal.simpleString()})")
    return to_arrow_schema(schema, timezone="UTC")
