"""The Python side gives EVENTS.md's answers where it used to depart from it:
XID field ranges, compressed and mistagged EVENTS bodies, statistics of
strings that are not UTF-8, PAGE records and page requests, NODE_ID, delete
requests naming a record twice, timestamp pruning at every unit, and event
columns that take a metadata column's name. Every case is real files in a
temporary folder: a lane, a node root, a commit log."""
from __future__ import annotations

import datetime
import json
import os

import pyarrow as pa
import pytest

from sparkjournal import Journal
from sparkjournal.errors import FormatVersionError
from sparkjournal.events import string_bounds
from sparkjournal.events.event_records import EVENTS, META_BATCH, META_QUERY, read_body, tag
from sparkjournal.events.lane_deletes import pending_deletions
from sparkjournal.events.lane_scan import LaneSlice, scan
from sparkjournal.events.node import NODE_ID_FILE, NodeIdError, read_node_id
from sparkjournal.events.page_records import PAGE, PageRecordError, PageRef, live_pages
from sparkjournal.events.pruning import META_STATS, Comparison, Predicate, read_stats
from sparkjournal.events.requests import REQUESTS, RequestError, carry_out, pending, submit
from sparkjournal.events.xid import BatchXid
from sparkjournal.journal.batch import ipc_bytes
from sparkjournal.maintenance.page_commit import HANDLERS as PAGE_HANDLERS
from sparkjournal.spark.committer import BatchCommitter
from sparkjournal.spark.schema import SchemaMismatchError

I64_MAX = (1 << 63) - 1
I64_MIN = -(1 << 63)


def lane_of(tmp_path, bodies, user_type: int = EVENTS) -> str:
    """A lane in ``tmp_path`` holding ``bodies`` as live records, ids 1, 2, ..."""
    lane = str(tmp_path / "lane-000")
    journal = Journal.open(lane)
    try:
        journal.append_batch(list(bodies), user_type=user_type, sync=True)
    finally:
        journal.close()
    return lane


def read_lane(lane: str, schema: pa.Schema, predicate: Predicate = Predicate(),
              columns: pa.Schema | None = None) -> pa.Table:
    log_uri = os.path.join(os.path.dirname(lane), "_commits")
    batches = list(scan(LaneSlice(lane, None, log_uri, predicate=predicate), schema, {},
                        columns=columns))
    return pa.Table.from_batches(batches) if batches else None


def body_with(batch: pa.RecordBatch, compression: str | None = None) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema,
                           options=pa.ipc.IpcWriteOptions(compression=compression)) as writer:
        writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def retagged(piece: pa.RecordBatch, **metadata: bytes) -> pa.RecordBatch:
    """``piece`` (tagged) with schema metadata keys replaced by raw bytes."""
    keys = {"query": META_QUERY, "batch": META_BATCH}
    changed = dict(piece.schema.metadata)
    changed.update({keys[name]: value for name, value in metadata.items()})
    return piece.replace_schema_metadata(changed)


# 1. XIDs ------------------------------------------------------------------

def xid_with(**fields) -> bytes:
    data = {"kind": "sparkjournal-2pc", "log": "/log", "query": "q", "batch": 3}
    data.update(fields)
    return json.dumps(data).encode()


@pytest.mark.parametrize("fields", [
    {"batch": 1 << 63}, {"batch": -1}, {"epoch": 1 << 63}, {"epoch": -1},
    {"prepared_at_ms": 1 << 63}, {"prepared_at_ms": -1},
    {"attempt": 1 << 63}, {"attempt": I64_MIN - 1}, {"partition": 1 << 63},
    {"task": I64_MIN - 1}, {"attempt": "1"}, {"epoch": 1.0}, {"task": True},
])
def test_an_xid_of_ours_with_a_field_out_of_its_range_is_not_ours(fields):
    assert BatchXid.decode(xid_with(**fields)) is None


def test_an_xid_at_the_ends_of_every_range_is_ours():
    ends = dict(batch=I64_MAX, epoch=I64_MAX, prepared_at_ms=I64_MAX, attempt=I64_MIN,
                partition=I64_MIN, task=I64_MAX)
    assert BatchXid.decode(xid_with(**ends)) == BatchXid("/log", "q", **ends)
    assert BatchXid.decode(xid_with(attempt=-1)).attempt == -1       # signed, as Spark's


# 2-4. EVENTS bodies --------------------------------------------------------

EVENTS_SCHEMA = pa.schema([("x", pa.int64())])


def events_piece(batch_id: int = 3) -> pa.RecordBatch:
    return tag(pa.record_batch({"x": list(range(100))}), "q", batch_id)


@pytest.mark.parametrize("compression", ["zstd", "lz4"])
def test_a_compressed_events_body_in_a_lane_is_damaged(tmp_path, compression):
    lane = lane_of(tmp_path, [body_with(events_piece(), compression)])
    with pytest.raises(pa.ArrowInvalid, match="compressed"):
        read_lane(lane, EVENTS_SCHEMA)
    with pytest.raises(pa.ArrowInvalid, match="compressed"):
        read_body(body_with(events_piece(), compression))


def test_the_same_body_uncompressed_reads(tmp_path):
    lane = lane_of(tmp_path, [body_with(events_piece())])
    table = read_lane(lane, EVENTS_SCHEMA)
    assert table.column("x").to_pylist() == list(range(100))
    assert set(table.column("_batch_id").to_pylist()) == {3}


def test_a_query_tag_that_is_not_utf8_is_damaged(tmp_path):
    lane = lane_of(tmp_path, [body_with(retagged(events_piece(), query=b"q\xff\xfe"))])
    with pytest.raises(pa.ArrowInvalid, match="query tag .* is not UTF-8"):
        read_lane(lane, EVENTS_SCHEMA)


@pytest.mark.parametrize("raw", [b"+7", b" 7 ", b"7 ", b"1_0", b"-3", b"", b"0x7", b"7.0", b"007",
                                 "\u0663".encode(), b"9223372036854775808",
                                 b"99999999999999999999999999"])
def test_a_batch_tag_that_is_not_ascii_digits_in_range_is_damaged(tmp_path, raw):
    lane = lane_of(tmp_path, [body_with(retagged(events_piece(), batch=raw))])
    with pytest.raises(pa.ArrowInvalid, match="batch tag"):
        read_lane(lane, EVENTS_SCHEMA)
    with pytest.raises(pa.ArrowInvalid, match="batch tag"):     # _batch_id not asked for
        read_lane(lane, EVENTS_SCHEMA, columns=EVENTS_SCHEMA)


@pytest.mark.parametrize("raw, batch_id", [(b"0", 0), (b"9223372036854775807", I64_MAX),
                                           (b"7", 7)])
def test_a_batch_tag_of_decimal_digits_in_range_reads_as_its_value(tmp_path, raw, batch_id):
    lane = lane_of(tmp_path, [body_with(retagged(events_piece(), batch=raw))])
    assert set(read_lane(lane, EVENTS_SCHEMA).column("_batch_id").to_pylist()) == {batch_id}


def test_a_body_with_an_empty_query_is_untagged_and_reads_a_null_batch(tmp_path):
    lane = lane_of(tmp_path, [body_with(retagged(events_piece(), query=b""))])
    assert set(read_lane(lane, EVENTS_SCHEMA).column("_batch_id").to_pylist()) == {None}


# 5. statistics of strings that are not UTF-8 ------------------------------

@pytest.mark.parametrize("native", [True, False], ids=["c-bounds", "pyarrow-bounds"])
def test_a_string_column_whose_bounds_are_not_utf8_gets_no_stats_entry(tmp_path, monkeypatch,
                                                                       native):
    if not native:
        monkeypatch.setattr(string_bounds, "lib", None)
    text = pa.Array.from_buffers(pa.string(), 3, [None, pa.py_buffer(
        b"\x00\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00\x04\x00\x00\x00"),
        pa.py_buffer(b"a\xff\xfeb")])
    batch = pa.record_batch([pa.array([5, 6, 7]), text, pa.array(["k", "l", "m"])],
                            names=["id", "bad", "good"])
    lane = lane_of(tmp_path, [ipc_bytes(tag(batch, "q", 1))])        # the write goes on
    with Journal.read(lane) as snapshot:
        stored = read_body(bytes(next(snapshot.records()).body))[0]
    stats = read_stats(stored.schema.metadata)
    assert stats == {"id": [5, 7], "good": ["k", "m"]}
    assert stored.column("bad").equals(text)                        # the rows as written


# 6. PAGE records and page requests ----------------------------------------

def page_ref() -> PageRef:
    return PageRef("page-00000000000000000001-0a1b2c3d.parquet", 4096, 7, 10, (1, 2),
                   (0, 1), (5, 6))


def test_a_page_record_whose_file_name_is_not_utf8_is_damaged(tmp_path):
    body = bytearray(page_ref().encode())
    body[80 + 5] = 0xFF                                   # inside the name
    lane = lane_of(tmp_path, [bytes(body)], user_type=PAGE)
    with Journal.read(lane) as snapshot:
        with pytest.raises(PageRecordError, match="not UTF-8"):
            live_pages(snapshot)


@pytest.mark.parametrize("cut", [None, 8], ids=["whole", "cut-after-8-bytes"])
def test_a_page_record_of_a_newer_version_is_newer_format_checked_first(tmp_path, cut):
    body = bytearray(page_ref().encode())
    body[4] = 2
    lane = lane_of(tmp_path, [bytes(body[:cut])], user_type=PAGE)
    with Journal.read(lane) as snapshot:
        with pytest.raises(FormatVersionError, match="PAGE record"):
            live_pages(snapshot)


@pytest.mark.parametrize("change", [
    {"batch_range": [1, 2, 3]}, {"batch_range": [1]}, {"time_range": [1, "2"]},
    {"time_range": {"0": 1, "1": 2}}, {"batch_range": [1 << 63, 0]},
    {"size": -1}, {"size": 1 << 64}, {"crc32c": 1 << 32}, {"rows": -1}, {"rows": 1.0},
    {"record_ids": [1 << 64]}, {"record_ids": "12"}, {"record_ids": [2, 1]},
])
def test_a_page_request_with_a_field_out_of_shape_is_a_request_error_writing_nothing(
        tmp_path, change):
    lane = lane_of(tmp_path, [ipc_bytes(events_piece())] * 2)
    page = dict(page_ref().as_request(), **change)
    submit(lane, "page", {"page": page})
    journal = Journal.open(lane)
    try:
        with pytest.raises(RequestError, match="page request"):
            carry_out(journal, PAGE_HANDLERS)
        assert journal.next_record_id() == 3 and journal.get(1) is not None
    finally:
        journal.close()
    assert len(pending(lane)) == 1                        # left for a person to remove


# 7. NODE_ID ---------------------------------------------------------------

def test_a_node_id_that_is_not_utf8_is_damaged_naming_the_file(tmp_path):
    (tmp_path / NODE_ID_FILE).write_bytes(b"0123abcd@host\xff\n")
    with pytest.raises(NodeIdError) as raised:
        read_node_id(str(tmp_path))
    assert str(tmp_path / NODE_ID_FILE) in str(raised.value)


@pytest.mark.parametrize("raw, node", [
    (b" \t0123abcd@host\r\n", "0123abcd@host"),
    ("\u00a00123abcd@host\u2003\n".encode(), "\u00a00123abcd@host\u2003"),
    (b"\x1c0123abcd@host\x1f\x0b\x0c\n", "\x1c0123abcd@host\x1f\x0b\x0c"),
    (b"0123abcd@ho\rst\n", "0123abcd@ho\rst"),
    (b" \r\n\t", None),
])
def test_a_node_id_loses_only_surrounding_ascii_whitespace(tmp_path, raw, node):
    (tmp_path / NODE_ID_FILE).write_bytes(raw)
    assert read_node_id(str(tmp_path)) == node


# 8. delete requests -------------------------------------------------------

def write_request(lane: str, request: dict) -> str:
    folder = os.path.join(lane, REQUESTS)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "00000000000000000001-000000000000.json")
    with open(path, "w") as handle:
        json.dump(request, handle)
    return path


@pytest.mark.parametrize("records", [{"7": None, "007": [1]}, {"0": None, "00": None}])
def test_a_delete_request_naming_one_record_twice_is_damaged(tmp_path, records):
    lane = lane_of(tmp_path, [ipc_bytes(events_piece())])
    path = write_request(lane, {"format": 1, "kind": "delete", "records": records})
    with pytest.raises(RequestError, match="twice") as raised:
        pending_deletions(lane)
    assert path in str(raised.value)


def test_a_delete_request_with_leading_zeros_once_and_a_string_why_deletes(tmp_path):
    lane = lane_of(tmp_path, [ipc_bytes(events_piece())])
    write_request(lane, {"format": 1, "kind": "delete", "records": {"001": [0, 2]},
                         "why": "retention"})
    assert pending_deletions(lane).rows_of(1) == {0, 2}


def test_a_delete_request_whose_why_is_not_a_string_is_damaged(tmp_path):
    lane = lane_of(tmp_path, [ipc_bytes(events_piece())])
    write_request(lane, {"format": 1, "kind": "delete", "records": {"1": None}, "why": 5})
    with pytest.raises(RequestError, match="why"):
        pending_deletions(lane)


# 9. timestamp pruning at every unit ---------------------------------------

# (unit, stored values in that unit, literals in microseconds since the epoch)
UNITS = [
    ("s", [-2, -1, 0, 1, 2],
     [-1_500_000, -1_000_000, -500_000, 500_000, 1_000_000, 1_500_000, 2_000_000, 2_500_000]),
    ("ms", [-1, 999, 1000, 1001],
     [-1_500, -500, 999_500, 1_000_000, 1_000_500, 1_001_000, 1_001_500]),
    ("us", [-1, 999_999, 1_000_000, 1_000_001], [-2, -1, 0, 999_999, 1_000_000, 1_000_001]),
    ("ns", [-1, 999_999_999, 1_000_000_000, 1_000_000_001, 1_000_001_000],
     [-1, 0, 999_999, 1_000_000, 1_000_001]),
]
NS_PER = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
OPS = {"<": int.__lt__, "<=": int.__le__, ">": int.__gt__, ">=": int.__ge__, "=": int.__eq__}
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize("unit, stored, literals", UNITS, ids=[u[0] for u in UNITS])
def test_timestamp_pruning_never_skips_a_record_holding_a_match(tmp_path, unit, stored, literals):
    kind = pa.timestamp(unit, tz="UTC")
    pieces = [tag(pa.record_batch([pa.array([value], kind)], names=["t"]), "q", 0)
              for value in stored]                        # one value per record: min = max
    lane = lane_of(tmp_path, [ipc_bytes(piece) for piece in pieces])
    schema = pa.schema([("t", kind)])
    assert all(json.loads(p.schema.metadata[META_STATS])["t"] == [v, v]
               for p, v in zip(pieces, stored))
    pruned_any = False
    for micros in literals:
        literal = EPOCH + datetime.timedelta(microseconds=micros)
        for op, holds in OPS.items():
            matching = {i + 1 for i, value in enumerate(stored)
                        if holds(value * NS_PER[unit], micros * 1000)}
            table = read_lane(lane, schema, Predicate((Comparison("t", op, literal),)))
            kept = set(table.column("_record_id").to_pylist()) if table else set()
            assert matching <= kept, (unit, op, micros, "a record holding a match was skipped")
            if op != "=":
                assert kept == matching, (unit, op, micros)   # and nothing kept needlessly
            pruned_any |= len(kept) < len(stored)
        table = read_lane(lane, schema, Predicate((Comparison("t", "in", (literal,)),)))
        kept = set(table.column("_record_id").to_pylist()) if table else set()
        assert {i + 1 for i, v in enumerate(stored) if v * NS_PER[unit] == micros * 1000} <= kept
    assert pruned_any


def test_a_float_column_holding_nan_is_never_skipped_for_greater_than_or_a_nan_literal(tmp_path):
    """Spark orders NaN above every number, and the bounds leave NaN out: a
    record of [1.0, NaN] (bounds [1.0, 1.0]) holds a match for x > 5, x >= 5
    and x < NaN; a record of [1.0] is skipped for x < 0 still."""
    pieces = [tag(pa.record_batch([pa.array(values, pa.float64())], names=["x"]), "q", 0)
              for values in ([1.0, float("nan")], [1.0])]
    assert json.loads(pieces[0].schema.metadata[META_STATS])["x"] == [1.0, 1.0]
    lane = lane_of(tmp_path, [ipc_bytes(piece) for piece in pieces])
    schema = pa.schema([("x", pa.float64())])

    def kept(op, value):
        table = read_lane(lane, schema, Predicate((Comparison("x", op, value),)))
        return set(table.column("_record_id").to_pylist()) if table else set()

    assert kept(">", 5.0) == kept(">=", 5.0) == {1, 2}
    assert kept("<", float("nan")) == kept("=", float("nan")) == {1, 2}
    assert kept("<", 0.0) == set()


# 10. reserved column names ------------------------------------------------

@pytest.mark.parametrize("name", ["_batch_id", "_commit_time", "_host", "_lane", "_record_id",
                                  "_row", "__sj_row"])
def test_an_events_column_named_like_a_metadata_column_is_refused_before_anything_is_written(
        tmp_path, name):
    journal = str(tmp_path / "journal")
    committer = BatchCommitter(journal, {})
    with pytest.raises(SchemaMismatchError) as raised:
        committer.check_schema(pa.schema([("id", pa.int64()), (name, pa.int64())]), "batch 0")
    assert f"column(s) {name} take names reserved" in str(raised.value)
    assert "Rename" in str(raised.value)
    assert committer.log.read_schema() is None and not os.path.exists(journal)


def test_a_later_batch_adding_a_reserved_column_is_refused_and_the_schema_kept(tmp_path):
    committer = BatchCommitter(str(tmp_path / "journal"), {})
    first = pa.schema([("id", pa.int64())])
    committer.check_schema(first, "batch 0")
    with pytest.raises(SchemaMismatchError, match="_lane"):
        committer.check_schema(first.append(pa.field("_lane", pa.string())), "batch 1")
    assert BatchCommitter(str(tmp_path / "journal"), {}).log.read_schema().equals(first)
