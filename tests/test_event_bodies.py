"""Decoding stored events bodies without Spark: the two IPC messages read where
they lie (event_records.split_body), and a lane scan's output built from the
record's own arrays (read_columns.ReadColumns)."""
from __future__ import annotations

import datetime

import pyarrow as pa
import pytest

from sparkjournal.events.event_records import batch_of, read_body, split_body, tag
from sparkjournal.events.lane_scan import spark_facing
from sparkjournal.events.read_columns import METADATA, ReadColumns
from sparkjournal.journal.batch import ipc_bytes

WRITER_ZONE = pa.timestamp("us", tz="Etc/UTC")        # a writer's session zone, as stored


def _stored_batch() -> pa.RecordBatch:
    start = datetime.datetime(2026, 11, 24, tzinfo=datetime.timezone.utc)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("ts", WRITER_ZONE),
                        ("key", pa.string()), ("amount", pa.float64())])
    batch = pa.record_batch([pa.array(range(5), pa.int64()),
                             pa.array([start + datetime.timedelta(seconds=s) for s in range(5)],
                                      WRITER_ZONE),
                             pa.array(list("abcde")), pa.array([0.5, None, 2.5, 3.5, 4.5])],
                            schema=schema)
    return tag(batch, "query-7", 41)


def _body_address_range(body: pa.Buffer) -> range:
    return range(body.address, body.address + body.size)


def test_split_body_gives_the_stored_schema_with_its_tag_and_the_undecoded_batch():
    stored = _stored_batch()
    schema, message = split_body(ipc_bytes(stored))
    assert schema.equals(stored.schema, check_metadata=True)
    assert message.type == "record batch"
    assert batch_of(schema) == ("query-7", 41)
    assert pa.ipc.read_record_batch(message, schema).equals(stored)


def test_a_body_in_the_legacy_ipc_framing_reads_the_same():
    stored = _stored_batch()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, stored.schema,
                           options=pa.ipc.IpcWriteOptions(use_legacy_format=True)) as writer:
        writer.write_batch(stored)
    legacy = sink.getvalue()
    assert legacy.to_pybytes()[:4] != b"\xff\xff\xff\xff"          # really the old framing
    batch, query, batch_id = read_body(legacy)
    assert batch.equals(stored) and (query, batch_id) == ("query-7", 41)


@pytest.mark.parametrize("body, says", [
    (b"\xff\xff\xff", "an events body of 3 bytes is not an Arrow IPC stream"),
    (b"\xff\xff\xff\xff\x40\x00\x00\x00" + b"\x00" * 8, "Expected to read 64 metadata bytes"),
])
def test_a_body_that_is_no_ipc_stream_is_refused_as_arrow_invalid(body, says):
    with pytest.raises(pa.ArrowInvalid) as failure:
        read_body(body)
    assert says in str(failure.value)


def test_event_columns_come_out_as_the_records_own_arrays_in_the_asked_schema():
    stored = _stored_batch()
    body = ipc_bytes(stored)
    asked = pa.schema([("amount", pa.float64()), ("ts", pa.timestamp("us", tz="UTC")),
                       ("id", pa.int64())])                     # reordered, UTC, nullable id
    output = ReadColumns(spark_facing(stored.schema.remove_metadata()), asked)
    schema, message = split_body(body)
    batch = output.batch(pa.ipc.read_record_batch(message, output.read_schema(schema)), {})
    assert batch.schema.equals(asked) and batch.schema.field("id").nullable
    assert batch.column("ts").to_pylist() == stored.column("ts").to_pylist()
    assert batch.column("amount").to_pylist() == [0.5, None, 2.5, 3.5, 4.5]
    inside = _body_address_range(body)
    for column in batch.columns:                                # zero-copy: views of the body
        assert all(b.address in inside for b in column.buffers() if b is not None)


def test_metadata_columns_and_columns_a_record_predates_are_built_beside_the_records_arrays():
    stored = _stored_batch()
    events = spark_facing(stored.schema.remove_metadata()).append(pa.field("added_later", pa.string()))
    asked = pa.schema([events.field("key"), events.field("added_later"),
                       METADATA.field("_batch_id"), METADATA.field("_row")])
    output = ReadColumns(events, asked)
    schema, message = split_body(ipc_bytes(stored))
    batch = output.batch(pa.ipc.read_record_batch(message, output.read_schema(schema)),
                         {"_batch_id": 41})
    assert batch.schema.equals(asked)
    assert batch.to_pydict() == {"key": list("abcde"), "added_later": [None] * 5,
                                 "_batch_id": [41] * 5, "_row": [0, 1, 2, 3, 4]}
