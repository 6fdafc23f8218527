"""The columns a lane scan yields, and building them from one stored record.

By default a scan yields the journal's events schema (nulls for columns a
record predates) and then the metadata columns, METADATA. A reader may ask for
any of those columns instead, in any order (Spark's user-specified schema,
``sparkjournal.read(..., columns=)``): a Python data source cannot make Spark
prune columns, but every column not yielded is one Spark does not convert from
Arrow to rows. Event columns are the record's own memory-mapped arrays (no
copy); metadata columns are built only when asked.

A name asked for that is neither an event nor a metadata column, or asked with
another type, raises UnknownColumnError before anything is read, naming the
column and every available one. Nullability is the asker's: a column asked as
not nullable must not hold nulls (checked by the Spark layer, user_schema.py).
"""
from __future__ import annotations

import pyarrow as pa

from ..errors import SparkJournalError
from ..format.constants import METADATA_COLUMNS
from .deletions import original_positions

# The Arrow types the declaration names (by their str()); a metadata column of another is refused.
_ARROW_TYPES = {str(t): t for t in (pa.int32(), pa.int64(), pa.string(), pa.timestamp("us", tz="UTC"))}
METADATA = pa.schema([(column, _ARROW_TYPES[METADATA_COLUMNS.extra["types"][key]])
                      for key, column in METADATA_COLUMNS.items()])
RECORD_METADATA = tuple(METADATA.names[:-1])  # a constant for every row of a stored record
_COLUMN, _METADATA, _ROW, _NULLS = "column", "metadata", "row", "nulls"     # ReadColumns plan steps


class UnknownColumnError(SparkJournalError, ValueError):
    """A column asked of a read that the journal does not have (or not with that type)."""


def full_schema(events_schema: pa.Schema) -> pa.Schema:
    return pa.schema(list(events_schema) + list(METADATA))


def describe(schema: pa.Schema) -> str:
    return ", ".join(f"{field.name} {field.type}" for field in schema)


def named(events_schema: pa.Schema, names, described: str | None = None) -> pa.Schema:
    """The fields of ``names``, in that order, from the events schema and
    METADATA; UnknownColumnError for any other name (a case-insensitive match
    is suggested), listing the columns as ``described`` (default: Arrow types)."""
    full = full_schema(events_schema)
    fields = []
    for name in names:
        index = full.get_field_index(name)
        if index < 0:
            near = [n for n in full.names if n.lower() == str(name).lower()]
            hint = f" (did you mean {near[0]}? names are case-sensitive)" if near else ""
            raise UnknownColumnError(f"column {name} is not in this journal{hint}: the journal "
                                     f"has {described or describe(full)}")
        fields.append(full.field(index))
    return pa.schema(fields)


class ReadColumns:
    """The plan of a scan's output: ``schema`` (default: all events columns,
    then METADATA), checked against the events schema. ``batch`` builds one
    record's output; constant metadata columns are built once and sliced, so a
    scan keeps one ReadColumns for all its records."""

    def __init__(self, events_schema: pa.Schema, schema: pa.Schema | None = None):
        self.schema = full_schema(events_schema) if schema is None else schema
        known = named(events_schema, self.schema.names)
        for asked, field in zip(self.schema, known):
            if asked.type != field.type:
                raise UnknownColumnError(f"column {asked.name} is {field.type} in this journal, "
                                         f"not {asked.type}: the journal has "
                                         f"{describe(full_schema(events_schema))}")
        self.metadata = [name for name in self.schema.names if name in RECORD_METADATA]
        self._constants: dict[str, tuple[object, pa.Array]] = {}
        self._planned: tuple[pa.Schema, list, list | None] | None = None
        self._read: tuple[pa.Schema, pa.Schema] | None = None

    def read_schema(self, stored: pa.Schema) -> pa.Schema:
        """The schema to decode a record stored as ``stored`` with: its own
        fields, except that each one this read yields under the same name and
        layout is decoded as the output's field (a timestamp of the writer's
        session zone as UTC: the same instants), so ``batch`` passes it on
        untouched. Kept for the next record of the same schema."""
        if self._read is None or not stored.equals(self._read[0]):
            fields = []
            for field in stored:
                index = self.schema.get_field_index(field.name)
                asked = self.schema.field(index) if index >= 0 else None
                same_layout = asked is not None and field.name not in METADATA.names and (
                    asked.type == field.type or _same_instants(field.type, asked.type))
                fields.append(asked if same_layout else field)
            self._read = (stored, pa.schema(fields))
        return self._read[1]

    def batch(self, batch: pa.RecordBatch, metadata: dict) -> pa.RecordBatch:
        """``batch`` (one stored record's rows decoded with ``read_schema``,
        deleted ones dropped) as exactly ``schema``; ``metadata``: the
        RECORD_METADATA values of the record (only read when a metadata column
        is asked). A column left in another type is cast (schema evolution)."""
        plan, picked = self._plan_for(batch.schema)
        if picked is not None:
            return batch.select(picked)               # the record's own arrays, no copy
        rows = batch.num_rows
        columns = []
        for kind, arg, type_ in plan:
            if kind is _COLUMN:
                column = batch.column(arg)
                columns.append(column if type_ is None else column.cast(type_))
            elif kind is _METADATA:
                columns.append(self._constant(arg, metadata[arg], type_, rows))
            elif kind is _ROW:
                columns.append(original_positions(batch, pa.int32()))
            else:
                columns.append(pa.nulls(rows, type_))         # a column the record predates
        return pa.RecordBatch.from_arrays(columns, schema=self.schema)

    def _plan_for(self, stored: pa.Schema) -> tuple[list[tuple], list[int] | None]:
        """How each output column is made from a record of schema ``stored``:
        (kind, argument, type), and the stored columns to pick when every
        output column is one of them, as is (else None); kept for the next
        record of the same schema (metadata aside: a lane's records differ
        only in theirs)."""
        if self._planned is None or not stored.equals(self._planned[0]):
            names, plan = stored.names, []
            for field in self.schema:
                if field.name == METADATA_COLUMNS.ROW:
                    plan.append((_ROW, None, None))
                elif field.name in RECORD_METADATA:
                    plan.append((_METADATA, field.name, field.type))
                elif field.name in names:
                    index = names.index(field.name)
                    same = stored.field(index).type == field.type
                    plan.append((_COLUMN, index, None if same else field.type))
                else:
                    plan.append((_NULLS, None, field.type))
            as_is = all(kind is _COLUMN and type_ is None and stored.field(arg) == field
                        for (kind, arg, type_), field in zip(plan, self.schema))
            self._planned = (stored, plan, [arg for _kind, arg, _type in plan] if as_is else None)
        return self._planned[1], self._planned[2]

    def _constant(self, name: str, value, type_: pa.DataType, rows: int) -> pa.Array:
        """``value`` repeated ``rows`` times: a slice of the last one built for
        this column when the value is the same (host and lane for a whole
        scan, batch id and commit time for a batch's records)."""
        found = self._constants.get(name)
        if found is None or found[0] != value or len(found[1]) < rows:
            found = self._constants[name] = (value, pa.repeat(pa.scalar(value, type_), rows))
        return found[1].slice(0, rows)


def _same_instants(stored: pa.DataType, asked: pa.DataType) -> bool:
    """Timestamps of one unit in two zones: the same stored values."""
    return pa.types.is_timestamp(stored) and pa.types.is_timestamp(asked) \
        and stored.unit == asked.unit

