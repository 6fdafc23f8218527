"""Spark's pushed filters as a record-pruning Predicate (events/pruning.py).

The one place that knows PySpark's filter classes; the predicate itself, and
what it may skip, are defined below the Spark layer.
"""
from __future__ import annotations

from ..events.pruning import EXACT_COLUMNS, Comparison, Predicate


def from_spark_filters(filters) -> tuple[Predicate, list]:
    """(the predicate of the filters we can use, the filters Spark must still
    apply). Comparisons on the integer and string metadata columns are exact
    per record, so Spark need not re-apply them; event-column and time ones
    (time zones are Spark's to get right) only prune, so they go back to Spark."""
    from pyspark.sql import datasource as ds
    simple = {ds.EqualTo: "=", ds.LessThan: "<", ds.LessThanOrEqual: "<=",
              ds.GreaterThan: ">", ds.GreaterThanOrEqual: ">="}
    used, rest = [], []
    for spark_filter in filters:
        op = simple.get(type(spark_filter))
        if isinstance(spark_filter, ds.In):
            op = "in"
        column = spark_filter.attribute[0] if len(getattr(spark_filter, "attribute", ())) == 1 else None
        if op is None or column is None:
            rest.append(spark_filter)
            continue
        value = tuple(spark_filter.value) if op == "in" else spark_filter.value
        used.append(Comparison(column, op, value))
        if column not in EXACT_COLUMNS:
            rest.append(spark_filter)
    return Predicate(tuple(used)), rest
