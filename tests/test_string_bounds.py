"""A record's string statistics (events/string_bounds.py): the C pass over a
column's Arrow buffers gives exactly the min and max that pyarrow's min_max
and Python's own str ordering give, whatever the column holds and however it
is sliced."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

from sparkjournal.events import string_bounds as bounds_mod
from sparkjournal.events.pruning import column_stats
from sparkjournal.events.string_bounds import string_bounds

pytestmark = pytest.mark.skipif(bounds_mod.lib is None, reason="the C core is not built")

ALPHABET = ["a", "b", "z", "A", "0", "", "é", "ß", "\u20ac", "\U0001F600", "\x00", "\x7f"]


def _random_values(rng: random.Random, count: int, null_share: float) -> list:
    values = []
    for _ in range(count):
        if rng.random() < null_share:
            values.append(None)
        else:
            values.append("".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 6))))
    return values


def _python_bounds(values: list) -> tuple:
    present = [v for v in values if v is not None]
    return (min(present), max(present)) if present else (None, None)


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
@pytest.mark.parametrize("null_share", [0.0, 0.3, 0.97])
def test_c_bounds_match_pyarrow_and_python_on_random_columns(kind, null_share):
    rng = random.Random(f"{kind}-{null_share}")
    for _ in range(40):
        values = _random_values(rng, rng.randint(1, 300), null_share)
        column = pa.array(values, type=kind)
        expected = _python_bounds(values)
        assert string_bounds(column) == expected
        assert string_bounds(column, native=False) == expected


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string()])
def test_a_sliced_column_is_bounded_by_its_own_rows_only(kind):
    values = ["m", None, "zzz", "b", "a", "yy", None, "c", "\U0001F600"]
    column = pa.array(values, type=kind)
    for start in range(len(values)):
        for stop in range(start + 1, len(values) + 1):
            piece = column.slice(start, stop - start)
            assert string_bounds(piece) == _python_bounds(values[start:stop]), (start, stop)


def test_prefixes_and_empty_strings_order_shorter_first():
    column = pa.array(["ab", "a", "", "abc", "a\x00"])
    assert string_bounds(column) == ("", "abc")


def test_bytes_above_ascii_compare_unsigned():
    column = pa.array(["\x7f", "é", "z"])                 # é is 0xC3 0xA9 in UTF-8
    assert string_bounds(column) == ("z", "é")        # signed bytes would put é first


def test_a_column_of_nulls_or_no_rows_has_no_bounds():
    assert string_bounds(pa.array([None, None], type=pa.string())) == (None, None)
    assert string_bounds(pa.array([], type=pa.string())) == (None, None)
    assert string_bounds(pa.array([None] * 5, type=pa.large_string()).slice(1, 3)) == (None, None)


def test_record_statistics_name_the_string_bounds():
    batch = pa.record_batch({"key": pa.array(["k2", None, "k10", "k1"]),
                             "n": pa.array([3, 1, 2, None])})
    assert column_stats(batch) == b'{"key":["k1","k2"],"n":[1,3]}'
