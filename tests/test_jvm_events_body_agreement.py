"""The JVM lane writer's EVENTS bodies (io.sparkjournal.events.EventsBodyWriter,
EventsStats, io.sparkjournal.spark.SparkArrowSchema) are what the Python sink
stores (event_records.tag + batch.ipc_bytes, pruning.column_stats,
event_records.pieces, schema.spark_to_arrow).

Python writes batches of every column kind the sink stores, and seeded random
ones, to Arrow IPC stream files; ``EventsBodyTool`` turns each into bodies.
Proven: Python's ``read_body`` of a Java body gives the original batch (values,
bit-exact floats, types), query and batch id; its stats equal
``column_stats`` of the same rows as parsed JSON, absent entries included, for
whole batches and for row ranges; the JVM reader (``EventsDump body``) accepts
the bodies; Java cuts a batch into the same pieces as ``pieces`` for every
budget; ``SparkArrowSchema`` gives the schema ``spark_to_arrow`` gives, and rows
written with Spark's ArrowWriter into it come back as the original batch.
Python never stores an empty piece (``pieces`` yields none), so none is tested.
"""
from __future__ import annotations

import datetime
import decimal
import json
import math
import os
import random
import struct
import subprocess

import pyarrow as pa
import pytest

from sparkjournal.events.event_records import pieces, read_body
from sparkjournal.events.pruning import column_stats
from sparkjournal.format import layout
from sparkjournal.spark.schema import spark_to_arrow

from test_jvm_events_agreement import jvm  # noqa: F401  (fixture: java launcher, class path)

TOOL = "io.sparkjournal.events.EventsBodyTool"
DUMP = "io.sparkjournal.events.EventsDump"
QUERY = "q-\u00e9v\u00e9nements"
FIRST_BATCH = 7
# max_body values: a budget of 1 byte, small ones that cut batches, one that does not
BUDGETS = [layout.RECORD_HEADER_SIZE + 4096 + 1, 4096 + 1500, 4096 + 6000, 4096 + 40000, 1 << 20]


def run_java(jvm, main: str, *args) -> list:
    java, classpath = jvm
    done = subprocess.run([java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", classpath,
                           main, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"{main} failed ({done.returncode}): {done.stderr[-3000:]}"
    return [json.loads(line) for line in done.stdout.splitlines()]


def write_stream(path, batches) -> str:
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_stream(sink, batches[0].schema) as out:
        for batch in batches:
            out.write_batch(batch)
    return str(path)


def exact(value):
    """A value where floats compare bit for bit (NaN and -0.0 included)."""
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if isinstance(value, list):
        return [exact(v) for v in value]
    if isinstance(value, dict):
        return {k: exact(v) for k, v in value.items()}
    return value


def assert_same_batch(got: pa.RecordBatch, want: pa.RecordBatch) -> None:
    assert got.schema.remove_metadata() == want.schema.remove_metadata()
    assert got.num_rows == want.num_rows
    for name, have, expected in zip(want.schema.names, got.columns, want.columns):
        assert exact(have.to_pylist()) == exact(expected.to_pylist()), name


def assert_body(path, want: pa.RecordBatch, batch_id: int) -> None:
    with open(path, "rb") as f:
        got, query, got_id = read_body(f.read())
    assert (query, got_id) == (QUERY, batch_id)
    assert_same_batch(got, want)
    assert got.schema.metadata[b"sparkjournal.batch"] == str(batch_id).encode()
    assert json.loads(got.schema.metadata[b"sparkjournal.stats"]) == \
        json.loads(column_stats(want)), "the stats stored in the body"


def every_kind(rows: int, seed: int) -> pa.RecordBatch:
    """A batch of every column kind the sink stores, plus the kinds column_stats treats apart."""
    rng = random.Random(seed)
    nulls = lambda values: [None if rng.random() < 0.2 else v for v in values]  # noqa: E731
    ints = lambda bits: [rng.randrange(-(1 << (bits - 1)), 1 << (bits - 1)) for _ in range(rows)]  # noqa: E731
    text = ["", "a", "\x00", "\x00a", "caf\u00e9", "\u00ff", "\U0001f600", "z", "Z", "\u20ac",
            "ab", "abc"]
    times = [1_700_000_000_000_000 + rng.randrange(10 ** 12) for _ in range(rows)]
    columns = {
        "i8": pa.array(ints(8), pa.int8()),
        "i16": pa.array(nulls(ints(16)), pa.int16()),
        "i32": pa.array(ints(32), pa.int32()),
        "i64": pa.array(nulls(ints(64)), pa.int64()),
        "u8": pa.array([rng.randrange(256) for _ in range(rows)], pa.uint8()),
        "u64": pa.array(nulls([rng.randrange(1 << 64) for _ in range(rows)]), pa.uint64()),
        "f32": pa.array(nulls([rng.uniform(-1e6, 1e6) for _ in range(rows)]), pa.float32()),
        "f64_nan": pa.array(nulls([math.nan if i % 3 == 0 else rng.uniform(-5, 5)
                                   for i in range(rows)]), pa.float64()),
        "f64_all_nan": pa.array([math.nan] * rows, pa.float64()),
        "f64_inf": pa.array([math.inf if i == rows // 2 else 1.5 for i in range(rows)]),
        "f64_neg_inf": pa.array([-math.inf if i == 0 else 1.5 for i in range(rows)]),
        "f64_zeros": pa.array([-0.0 if i % 2 else 0.0 for i in range(rows)]),
        "all_null_int": pa.array([None] * rows, pa.int64()),
        "all_null_text": pa.array([None] * rows, pa.string()),
        "s": pa.array(nulls([rng.choice(text) for _ in range(rows)]), pa.string()),
        "s_large": pa.array(nulls([rng.choice(text) for _ in range(rows)]), pa.large_string()),
        "s_long": pa.array(["x" * 40 + str(i) for i in range(rows)]),
        # the short-string test at its limit (no nulls: offsets 4 * rows + data 36 * rows)
        "s_at_limit": pa.array(["y" * 36] * rows),
        "s_over_limit": pa.array(["y" * 36] * (rows - 1) + ["y" * 37]),
        "bin": pa.array(nulls([bytes([rng.randrange(256)]) * rng.randrange(5)
                               for _ in range(rows)]), pa.binary()),
        "ts_utc": pa.array(nulls(times), pa.timestamp("us", tz="UTC")),
        "ts_ntz": pa.array(times, pa.timestamp("us")),
        "ts_ns": pa.array(nulls(times), pa.timestamp("ns", tz="Europe/Paris")),
        "d32": pa.array(nulls([rng.randrange(-1000, 30000) for _ in range(rows)]), pa.date32()),
        "d64": pa.array([86_400_000 * rng.randrange(-1000, 30000) for _ in range(rows)],
                        pa.date64()),
        "dec": pa.array(nulls([decimal.Decimal(rng.randrange(-10 ** 9, 10 ** 9)) / 100
                               for _ in range(rows)]), pa.decimal128(12, 2)),
        "flag": pa.array(nulls([rng.random() < 0.5 for _ in range(rows)])),
        "tags": pa.array(nulls([[rng.randrange(9) for _ in range(rng.randrange(4))]
                                for _ in range(rows)]), pa.list_(pa.int32())),
        "point": pa.array(nulls([{"x": rng.randrange(99), "label": rng.choice(text)}
                                 for _ in range(rows)]),
                          pa.struct([("x", pa.int64()), ("label", pa.string())])),
    }
    return pa.record_batch(list(columns.values()), names=list(columns))


def random_batch(rng: random.Random, rows: int) -> pa.RecordBatch:
    """Random nulls, random strings of 0-12 code points from several UTF-8 widths."""
    alphabet = "ab\x00~\u00e9\u00ff\u0800\u20ac\uffff\U00010000\U0001f600"
    null_rate = rng.choice([0.0, 0.1, 0.5, 1.0])
    pick = lambda make: [None if rng.random() < null_rate else make() for _ in range(rows)]  # noqa: E731
    return pa.record_batch([
        pa.array(pick(lambda: rng.randrange(-(1 << 63), 1 << 63)), pa.int64()),
        pa.array(pick(lambda: rng.randrange(-(1 << 31), 1 << 31)), pa.int32()),
        pa.array(pick(lambda: rng.choice([rng.uniform(-1e9, 1e9), math.nan, -0.0, 0.0])),
                 pa.float64()),
        pa.array(pick(lambda: "".join(rng.choice(alphabet) for _ in range(rng.randrange(13)))),
                 pa.string()),
        pa.array(pick(lambda: "k" * rng.randrange(80)), pa.string()),
        pa.array(pick(lambda: rng.randrange(10 ** 15)), pa.timestamp("us", tz="UTC")),
        pa.array(pick(lambda: rng.randrange(-10 ** 5, 10 ** 5)), pa.date32()),
    ], names=["id", "n", "x", "word", "blob", "at", "day"])


def check_bodies(tmp_path, jvm, batches, budgets=BUDGETS) -> None:
    """Java's bodies, stats and pieces of ``batches`` against Python's, then the JVM reader."""
    source = write_stream(tmp_path / "in.arrows", batches)
    out = tmp_path / "out"
    out.mkdir()
    lines = run_java(jvm, TOOL, "bodies", source, out, QUERY, FIRST_BATCH,
                     ",".join(map(str, budgets)))
    assert len(lines) == len(batches)
    bodies = []
    for k, (batch, line) in enumerate(zip(batches, lines)):
        assert line["rows"] == batch.num_rows
        assert line["nbytes"] == batch.nbytes
        assert line["stats"] == json.loads(column_stats(batch))
        assert_body(out / f"{k}.body", batch, FIRST_BATCH + k)
        bodies.append(str(out / f"{k}.body"))
        for budget in budgets:
            java = line["pieces"][str(budget)]
            python = list(pieces(batch, budget))
            assert [[p[0], p[1]] for p in java["pieces"]] == \
                [[start, len(piece)] for start, piece in
                 zip(range(0, batch.num_rows, max(1, java["rows_per_piece"])), python)], budget
            assert len(java["pieces"]) == len(python)
            for j, ((start, rows, size), piece) in enumerate(zip(java["pieces"], python)):
                assert_body(out / f"{k}-{budget}-{j}.body", piece, FIRST_BATCH + k)
                bodies.append(str(out / f"{k}-{budget}-{j}.body"))
    dumped = run_java(jvm, DUMP, "body", *bodies)
    assert len(dumped) == len(bodies)
    for path, line in zip(bodies, dumped):
        with open(path, "rb") as f:
            got, _, _ = read_body(f.read())
        assert line["query"] == QUERY and line["batch"] >= FIRST_BATCH, line
        assert line["stats"] == json.loads(got.schema.metadata[b"sparkjournal.stats"])
        assert line["type"] == "record batch" and line["columns"]["rows"] == got.num_rows


def test_every_column_kind_reads_back_with_python_stats_and_pieces(tmp_path, jvm):
    batches = [every_kind(rows, seed) for rows, seed in [(50, 1), (1, 2), (9, 3), (300, 4)]]
    stats = json.loads(column_stats(batches[0]))
    # the cases are what they claim: the limit is inclusive, NaN is skipped, inf is not stored
    assert "s_at_limit" in stats and "s_over_limit" not in stats and "s_long" not in stats
    assert "f64_nan" in stats and not {"f64_all_nan", "f64_inf", "all_null_int"} & set(stats)
    check_bodies(tmp_path, jvm, batches)


def test_random_batches_have_python_stats_whole_and_in_pieces(tmp_path, jvm):
    rng = random.Random(20240611)
    batches = [random_batch(rng, rng.choice([1, 2, 7, 64, 333, 1000])) for _ in range(24)]
    check_bodies(tmp_path, jvm, batches, budgets=[4096 + 3000, 4096 + 50000])


SPARK_SCHEMAS = [
    {"type": "struct", "fields": [
        {"name": n, "type": t, "nullable": i % 2 == 0, "metadata": {}}
        for i, (n, t) in enumerate([("b", "boolean"), ("i8", "byte"), ("i16", "short"),
                                    ("i32", "integer"), ("i64", "long"), ("f", "float"),
                                    ("d", "double"), ("s", "string"), ("bin", "binary"),
                                    ("day", "date"), ("ts", "timestamp"),
                                    ("ntz", "timestamp_ntz"), ("dec", "decimal(12,2)"),
                                    ("dec38", "decimal(38,0)"), ("nothing", "void")])]},
    {"type": "struct", "fields": [
        {"name": "tags", "type": {"type": "array", "elementType": "string",
                                  "containsNull": True}, "nullable": True, "metadata": {}},
        {"name": "ids", "type": {"type": "array", "elementType": "long",
                                 "containsNull": False}, "nullable": False, "metadata": {}},
        {"name": "attrs", "type": {"type": "map", "keyType": "string", "valueType": "double",
                                   "valueContainsNull": True}, "nullable": True, "metadata": {}},
        {"name": "point", "type": {"type": "struct", "fields": [
            {"name": "x", "type": "integer", "nullable": False, "metadata": {}},
            {"name": "when", "type": "timestamp", "nullable": True,
             "metadata": {"comment": "caf\u00e9 \"quoted\"", "n": 3}}]},
         "nullable": True, "metadata": {}},
        {"name": "noted", "type": "long", "nullable": True,
         "metadata": {"comment": "the id", "flags": [True, False], "nested": {"k": "v"}}},
        {"name": "span", "type": "interval day to second", "nullable": True, "metadata": {}},
    ]},
]


def field_metadata(fields) -> list:
    """(name, metadata) of every field, nested ones included; absent and empty alike."""
    out = []
    for field in fields:
        out.append((field.name, field.metadata or None))
        kind = field.type
        children = [kind.field(i) for i in range(kind.num_fields)] \
            if isinstance(kind, (pa.StructType, pa.ListType, pa.MapType)) else []
        if isinstance(kind, pa.MapType):
            children = [kind.key_field, kind.item_field]
        out.extend(field_metadata(children))
    return out


@pytest.mark.parametrize("timezone", ["UTC", "America/New_York"])
def test_spark_schemas_map_to_the_arrow_schema_spark_to_arrow_gives(tmp_path, jvm, timezone):
    from pyspark.sql.types import StructType
    files = []
    for k, schema in enumerate(SPARK_SCHEMAS):
        path = tmp_path / f"{k}.json"
        path.write_text(StructType.fromJson(schema).json())
        files.append(path)
    lines = run_java(jvm, TOOL, "schema", tmp_path, timezone, *files)
    assert len(lines) == len(SPARK_SCHEMAS)
    for k, schema in enumerate(SPARK_SCHEMAS):
        # PySpark's df.schema is the JVM's json() parsed: its metadata keys in Spark's order
        want = spark_to_arrow(StructType.fromJson(json.loads(lines[k]["spark"])), timezone)
        got = pa.ipc.read_schema(pa.py_buffer((tmp_path / f"{k}.arrow").read_bytes()))
        assert got.equals(want, check_metadata=True), f"{k}:\n{got}\n!=\n{want}"
        assert field_metadata(got) == field_metadata(want)
        assert json.loads(lines[k]["json"])["fields"]


def test_spark_rows_written_by_spark_arrow_writer_read_back_as_the_batch(tmp_path, jvm):
    from pyspark.sql.types import StructType
    spark = StructType.fromJson({"type": "struct", "fields": [
        {"name": n, "type": t, "nullable": True, "metadata": {}}
        for n, t in [("i", "integer"), ("l", "long"), ("d", "double"), ("s", "string"),
                     ("bin", "binary"), ("day", "date"), ("ts", "timestamp"),
                     ("ntz", "timestamp_ntz"), ("dec", "decimal(12,2)"), ("b", "boolean")]]
        + [{"name": "tags", "type": {"type": "array", "elementType": "string",
                                     "containsNull": True}, "nullable": True, "metadata": {}},
           {"name": "point", "type": {"type": "struct", "fields": [
               {"name": "x", "type": "integer", "nullable": True, "metadata": {}},
               {"name": "y", "type": "string", "nullable": True, "metadata": {}}]},
            "nullable": True, "metadata": {}}]})
    schema = spark_to_arrow(spark)
    rng = random.Random(5)
    rows = 40
    maybe = lambda v: None if rng.random() < 0.25 else v  # noqa: E731
    values = {
        "i": [maybe(rng.randrange(-99, 99)) for _ in range(rows)],
        "l": [maybe(rng.randrange(-(1 << 63), 1 << 63)) for _ in range(rows)],
        "d": [maybe(rng.choice([math.nan, -0.0, rng.random()])) for _ in range(rows)],
        "s": [maybe(rng.choice(["", "caf\u00e9", "\U0001f600", "x" * 50])) for _ in range(rows)],
        "bin": [maybe(b"\x00\xff" * rng.randrange(3)) for _ in range(rows)],
        "day": [maybe(datetime.date(2024, 1, 1) + datetime.timedelta(days=rng.randrange(400)))
                for _ in range(rows)],
        "ts": [maybe(datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc)
                     + datetime.timedelta(microseconds=rng.randrange(10 ** 12)))
               for _ in range(rows)],
        "ntz": [maybe(datetime.datetime(2024, 5, 1) + datetime.timedelta(seconds=i))
                for i in range(rows)],
        "dec": [maybe(decimal.Decimal(rng.randrange(-10 ** 6, 10 ** 6)) / 100)
                for _ in range(rows)],
        "b": [maybe(rng.random() < 0.5) for _ in range(rows)],
        "tags": [maybe([maybe("t%d" % rng.randrange(5)) for _ in range(rng.randrange(3))])
                 for _ in range(rows)],
        "point": [maybe({"x": maybe(rng.randrange(9)), "y": maybe("p")}) for _ in range(rows)],
    }
    batch = pa.record_batch([pa.array(values[f.name], f.type) for f in schema], schema=schema)
    source = write_stream(tmp_path / "in.arrows", [batch, batch.slice(5, 7)])
    (tmp_path / "spark.json").write_text(spark.json())
    out = tmp_path / "out"
    out.mkdir()
    lines = run_java(jvm, TOOL, "refill", source, out, QUERY, FIRST_BATCH,
                     tmp_path / "spark.json", "UTC")
    assert [line["rows"] for line in lines] == [rows, 7]
    assert_body(out / "0.body", batch, FIRST_BATCH)
    assert_body(out / "1.body", batch.slice(5, 7), FIRST_BATCH + 1)
