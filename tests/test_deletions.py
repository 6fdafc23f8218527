"""Deletion vectors and lane requests, without Spark: the byte format, damaged
input, original positions across successive deletions, and a delete request
carried out by a lane's writer exactly once in effect."""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

from sparkjournal import Journal
from sparkjournal.events.deletions import (DELETION_VECTOR, DeletionVectorError, Deletions,
                                           decode_vector, encode_vector)
from sparkjournal.events.event_records import EVENTS, read_body, rewrite_body, tag
from sparkjournal.events.lane_deletes import lane_deletions, pending_deletions
from sparkjournal.events.requests import RequestError, pending, submit
from sparkjournal.maintenance.lane_requests import apply_now, carry_out_all
from sparkjournal.config import load_config


def test_a_vector_round_trips_sorted_without_repeats_and_all_rows_is_a_flag():
    target, positions = decode_vector(encode_vector(41, [9, 2, 2, 5]))
    assert (target, positions.to_pylist()) == (41, [2, 5, 9])
    assert decode_vector(encode_vector(7, None)) == (7, None)


@pytest.mark.parametrize("damage, message", [
    (lambda raw: raw[:10], "shorter than its header"),
    (lambda raw: b"XXXX" + raw[4:], "not a version 1 deletion vector"),
    (lambda raw: raw[:-4], "says 3 positions but holds 2"),
])
def test_a_damaged_vector_is_refused_naming_what_is_wrong(damage, message):
    with pytest.raises(DeletionVectorError) as failure:
        decode_vector(damage(encode_vector(3, [1, 2, 3])))
    assert message in str(failure.value)


def test_positions_stay_original_through_successive_deletions():
    batch = pa.record_batch({"id": list(range(10))})
    first = Deletions()
    first.add(1, [0, 3, 4])
    once = first.apply(batch, 1)
    assert once.column("id").to_pylist() == [1, 2, 5, 6, 7, 8, 9]
    second = Deletions()
    second.add(1, [5, 9])                          # original positions, not positions in `once`
    assert second.apply(once, 1).column("id").to_pylist() == [1, 2, 6, 7, 8]
    everything = Deletions()
    everything.add(1, None)
    assert everything.apply(batch, 1) is None and everything.apply(batch, 2) is batch


def test_a_rewritten_body_keeps_its_metadata_and_the_survivors_positions():
    batch = tag(pa.record_batch({"id": list(range(6)), "key": list("abcdef")}), "query-1", 12)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    body = rewrite_body(sink.getvalue(), {1, 4})
    rewritten, query, batch_id = read_body(body)
    assert (query, batch_id) == ("query-1", 12)
    assert rewritten.column("id").to_pylist() == [0, 2, 3, 5]
    assert rewritten.column("__sj_row").to_pylist() == [0, 2, 3, 5]
    assert rewrite_body(sink.getvalue(), set(range(6))) is None


def test_a_delete_request_is_visible_pending_and_carried_out_once_in_effect(lane, options):
    with Journal.open(lane, **options) as journal:
        for record_id in range(1, 4):
            journal.append_add(record_id, b"events", user_type=EVENTS)
    submit(lane, "delete", {"records": {"1": None, "2": [0, 3]}, "why": "test"})
    seen = pending_deletions(lane)
    assert seen.whole(1) and seen.rows_of(2) == {0, 3} and 3 not in seen
    with Journal.open(lane, **options) as journal:
        assert carry_out_all(journal) == 1
        submit(lane, "delete", {"records": {"1": None, "2": [3]}, "why": "the same again"})
        assert carry_out_all(journal) == 1          # nothing new: no record written
    assert pending(lane) == []
    with Journal.read(lane, **options) as snapshot:
        assert sorted(r.record_id for r in snapshot.records() if r.user_type == EVENTS) == [2, 3]
        vectors = [r for r in snapshot.records() if r.user_type == DELETION_VECTOR]
        assert len(vectors) == 1
        assert lane_deletions(snapshot).rows_of(2) == {0, 3}


def test_apply_now_carries_out_only_when_the_lane_is_free(lane, options):
    with Journal.open(lane, **options) as journal:
        journal.append_add(1, b"events", user_type=EVENTS)
        submit(lane, "delete", {"records": {"1": None}, "why": "test"})
        assert not apply_now(lane, load_config(options))       # we hold it
    assert apply_now(lane, load_config(options)) and pending(lane) == []
    with Journal.read(lane, **options) as snapshot:
        assert len(snapshot) == 0


def test_a_damaged_request_fails_naming_it_and_what_to_do(lane, options):
    Journal.open(lane, **options).close()
    path = submit(lane, "delete", {"records": {}, "why": "test"})
    with open(path, "w") as handle:
        handle.write("{not json")
    with pytest.raises(RequestError) as failure:
        pending(lane)
    assert os.path.basename(path) in str(failure.value) and "remove it" in str(failure.value)
