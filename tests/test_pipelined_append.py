"""PipelinedAppend (journal/pipelined_append.py): a transaction's chunks
appended from a thread of their own, against what plain appends of the same
chunks leave on disk; a failing append reaches the caller; leaving early
stops the thread."""
from __future__ import annotations

import pytest

from sparkjournal import Journal
from sparkjournal.journal.pipelined_append import PipelinedAppend

SMALL = {"fileSize": "64k", "bufferSize": "16k"}


def chunks(count: int, per_chunk: int) -> list[list[bytes]]:
    return [[f"chunk {c} body {i} ".encode() * (1 + i % 5) for i in range(per_chunk)]
            for c in range(count)]


def test_chunks_land_in_order_as_one_transaction_as_plain_appends_would(tmp_path):
    given = chunks(12, 9)
    with Journal.open(str(tmp_path / "piped"), **SMALL) as journal:
        tx = journal.next_tx_id()
        with PipelinedAppend(journal, tx, user_type=7) as pipe:
            for chunk in given:
                pipe.put(chunk)
            assert pipe.finish() == 12 * 9
        journal.prepare(tx, b"xid", sync=True)
        journal.commit(tx, sync=True)
    with Journal.open(str(tmp_path / "plain"), **SMALL) as journal:
        tx = journal.next_tx_id()
        for chunk in given:
            journal.append_batch(chunk, user_type=7, tx_id=tx, sync=False)
        journal.prepare(tx, b"xid", sync=True)
        journal.commit(tx, sync=True)
    read = {}
    for name in ("piped", "plain"):
        with Journal.read(str(tmp_path / name)) as snapshot:
            read[name] = [(r.record_id, r.user_type, bytes(r.body)) for r in snapshot.records()]
    assert read["piped"] == read["plain"]
    assert [body for _id, _type, body in read["piped"]] == [b for chunk in given for b in chunk]


def test_a_failing_append_reaches_the_caller_and_nothing_after_it_is_appended(tmp_path):
    with Journal.open(str(tmp_path / "lane"), **SMALL) as journal:
        tx = journal.next_tx_id()
        with pytest.raises(TypeError, match="bytes-like object is required"):
            with PipelinedAppend(journal, tx, user_type=1) as pipe:
                pipe.put([b"first"])
                pipe.put([b"second", None])              # this append fails in the thread
                for _ in range(50):
                    pipe.put([b"later"])
                pipe.finish()
        assert pipe.records == 1
        journal.rollback(tx, sync=True)
    with Journal.read(str(tmp_path / "lane")) as snapshot:
        assert list(snapshot.records()) == [] and snapshot.open_transactions() == {}


def test_leaving_early_stops_the_thread_and_drops_queued_chunks(tmp_path):
    with Journal.open(str(tmp_path / "lane"), **SMALL) as journal:
        tx = journal.next_tx_id()
        with pytest.raises(RuntimeError, match="the caller failed"):
            with PipelinedAppend(journal, tx, user_type=1, depth=1) as pipe:
                for chunk in chunks(5, 3):
                    pipe.put(chunk)
                raise RuntimeError("the caller failed")
        assert not pipe._thread.is_alive()
        assert pipe.records <= 5 * 3
        journal.rollback(tx, sync=True)
