"""The process's pool of staging buffers (io/direct_write.py): a released
stage's memory serves the next stage, within POOL_BYTES, and a journal opened
again writes its records alone from the buffer the last one released."""
from __future__ import annotations

import os

import pytest

from sparkjournal.io import direct_write
from sparkjournal.io.direct_write import Stage
from sparkjournal.journal.journal import Journal

MIB = 1 << 20


@pytest.fixture
def empty_pool(monkeypatch):
    pool = direct_write._StagePool()
    monkeypatch.setattr(direct_write, "_pool", pool)
    return pool


def test_released_stage_buffer_serves_the_next_stage(empty_pool):
    first = Stage()
    view = first.view(3 * MIB)
    view[:5] = b"stale"
    buffer = first._buf
    view.release()
    first.release()

    second = Stage()
    reused = second.view(2 * MIB)
    assert second._buf is buffer
    assert len(reused) == 2 * MIB
    assert bytes(reused[:5]) == b"stale"        # not zeroed: callers write what they write out
    assert empty_pool.take(1) is None          # taken, so no longer pooled


def test_the_smallest_fitting_buffer_is_taken(empty_pool):
    stages = [Stage() for _ in range(3)]
    for stage, size in zip(stages, (4 * MIB, 1 * MIB, 2 * MIB)):
        stage.view(size).release()
    buffers = [stage._buf for stage in stages]
    for stage in stages:
        stage.release()
    assert empty_pool.take(MIB + 1) is buffers[2]
    assert empty_pool.take(MIB + 1) is buffers[0]
    assert empty_pool.take(MIB + 1) is None


def test_the_pool_keeps_at_most_pool_bytes(empty_pool, monkeypatch):
    monkeypatch.setattr(direct_write, "POOL_BYTES", 3 * MIB)
    kept, dropped = Stage(), Stage()
    kept.view(2 * MIB).release()
    dropped.view(2 * MIB).release()
    dropped_buffer = dropped._buf
    kept.release()
    dropped.release()
    assert dropped_buffer.closed                # would pass 3 MiB: unmapped, not pooled
    assert empty_pool.take(1) is not None


def test_a_growing_stage_gives_its_smaller_buffer_back(empty_pool):
    stage = Stage()
    stage.view(MIB).release()
    small = stage._buf
    stage.view(3 * MIB).release()
    assert stage._buf is not small
    assert empty_pool.take(MIB) is small


def test_a_reopened_journal_writes_alone_from_the_released_stage(tmp_path, empty_pool):
    body = os.urandom(600 << 10)                # larger than the 490 KiB buffer: written alone
    lane = str(tmp_path / "lane")
    with Journal.open(lane, journalType="NIO") as journal:
        journal.append_add(1, body)
        released = journal._appender._stage._buf
    assert released is not None and not released.closed
    with Journal.open(lane, journalType="NIO") as journal:
        journal.append_add(2, body[::-1])
        assert journal._appender._stage._buf is released
    with Journal.open(lane, journalType="NIO") as journal:
        assert {r.record_id: bytes(r.body) for r in journal.records()} == {1: body, 2: body[::-1]}


def test_a_buffer_past_the_pool_with_a_live_view_is_left_to_the_collector(empty_pool, monkeypatch):
    monkeypatch.setattr(direct_write, "POOL_BYTES", 0)
    stage = Stage()
    view = stage.view(MIB)                      # still referenced when the stage is released
    stage.release()
    view[:2] = b"ok"                            # the memory stays valid while the view lives
    assert bytes(view[:2]) == b"ok"
    assert empty_pool.take(1) is None
