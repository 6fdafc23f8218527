"""Records larger than the write buffer but not than a data file: written alone
into the pre-created data files (Appender.append_alone), one write and one sync,
with every other record's contract: CRC over header and body, a torn write at
the tail is end of data, damage before the tail is corruption. Bodies too big
for a data file still go to large/ (test_large_write.py).

Files here: 256k data files, 16k write buffer, maxIO 4 (a 64k sync window), so
a 100k record is larger than both the buffer and the window.
"""
from __future__ import annotations

import os

import pyarrow as pa
import pytest

from sparkjournal import CorruptJournalError, Journal
from sparkjournal.format import layout
from sparkjournal.journal import journal as journal_module
from sparkjournal.journal.batch import ipc_bytes
from lane_surgery import flip, patch, scan_lane

SIZES = {"fileSize": "256k", "bufferSize": "16k", "minFiles": 2, "maxIO": 4}
WINDOW = 4 * 16 * 1024


@pytest.fixture
def opts(backend):
    return {**SIZES, "journalType": backend}


def body_of(record_id: int, size: int) -> bytes:
    seed = f"big-{record_id}:".encode()
    return (seed * (size // len(seed) + 1))[:size]


def large_bodies(lane: str) -> list:
    folder = os.path.join(lane, "large")
    return os.listdir(folder) if os.path.isdir(folder) else []


def extents(lane: str) -> list:
    """[(path, file id, [(offset, size, record id)])] of every file with data."""
    return [(f.path, f.file_id, [(e.offset, e.size, e.record_id) for e in f.records])
            for f in scan_lane(lane)]


def live(snapshot) -> dict:
    return {r.record_id: bytes(r.body) for r in snapshot.records()}


# --- where big records go -----------------------------------------------------------------
def test_record_larger_than_buffer_lands_in_data_file(lane, opts):
    big = os.urandom(100_000)
    with Journal.open(lane, **opts) as journal:
        journal.append_add(1, b"small")
        syncs = journal._appender.stats["syncs"]
        journal.append_add(2, big, user_type=7)
        # one write and one sync for the big record (record 1 was already durable)
        assert journal._appender.stats["syncs"] == syncs + 1
        journal.append_add(3, b"after")
        assert bytes(journal.get(2).body) == big
    assert large_bodies(lane) == []
    [(path, _fid, records)] = extents(lane)
    assert [r[2] for r in records] == [1, 2, 3]
    with Journal.open(lane, **opts) as journal:
        record = journal.get(2)
        assert not record.large and record.user_type == 7 and record.body_len == len(big)
        assert live(journal) == {1: b"small", 2: big, 3: b"after"}
        assert journal.report.torn_tail is None


def test_unsynced_records_before_a_big_record_are_made_durable_first(lane, opts):
    with Journal.open(lane, **opts) as journal:
        for record_id in range(1, 11):
            journal.append_add(record_id, body_of(record_id, 500), sync=False)
        journal.append_add(11, body_of(11, 50_000), sync=False)
        # the big record returns durable, and so is everything before it
        assert journal._appender._durable == journal._appender._appended
    with Journal.open(lane, **opts) as journal:
        assert sorted(live(journal)) == list(range(1, 12))


def test_big_record_that_does_not_fit_the_rest_of_the_file_rolls_to_the_next(lane, opts):
    with Journal.open(lane, **opts) as journal:
        journal.append_add(1, body_of(1, 150_000))
        journal.append_add(2, body_of(2, 150_000))           # 150k more do not fit in 256k
        journal.append_add(3, body_of(3, 250_000))           # the most a 256k file holds
    scanned = extents(lane)
    assert [[r[2] for r in records] for _p, _f, records in scanned] == [[1], [2], [3]]
    assert all(records[0][0] == layout.FILE_HEADER_SIZE for _p, _f, records in scanned)
    with Journal.open(lane, **opts) as journal:
        assert live(journal) == {i: body_of(i, n) for i, n in ((1, 150_000), (2, 150_000), (3, 250_000))}
    assert large_bodies(lane) == []


def test_record_too_big_for_a_data_file_goes_to_the_large_store(lane, opts):
    biggest_in_file = 256 * 1024 - layout.FILE_HEADER_SIZE - layout.RECORD_HEADER_SIZE
    with Journal.open(lane, **opts) as journal:
        journal.append_add(1, body_of(1, biggest_in_file))
        journal.append_add(2, body_of(2, biggest_in_file + 1))
        assert [journal.get(1).large, journal.get(2).large] == [False, True]
    assert len(large_bodies(lane)) == 1
    with Journal.open(lane, **opts) as journal:
        assert live(journal) == {1: body_of(1, biggest_in_file), 2: body_of(2, biggest_in_file + 1)}


def test_large_record_size_option_still_sends_bodies_to_the_large_store(lane, opts):
    with Journal.open(lane, largeRecordSize="32k", **opts) as journal:
        journal.append_add(1, body_of(1, 20_000))           # above the buffer: in the file
        journal.append_add(2, body_of(2, 40_000))           # above largeRecordSize: large/
        assert [journal.get(1).large, journal.get(2).large] == [False, True]


def test_arrow_batch_larger_than_buffer_is_serialized_into_the_data_file(lane, opts):
    big = pa.record_batch({"s": pa.array([f"{i:08d}" * 20 for i in range(1000)])})   # ~170k
    small = pa.record_batch({"x": pa.array([1, 2, 3])})
    with Journal.open(lane, **opts) as journal:
        ids = journal.append_batch([small, big, small], sync=True)
    assert large_bodies(lane) == []
    with Journal.open(lane, **opts) as journal:
        records = [journal.get(i) for i in ids]
        assert [r.large for r in records] == [False, False, False]
        assert [bytes(r.body) for r in records] == [ipc_bytes(b).to_pybytes() for b in (small, big, small)]


def test_big_transactional_records_commit_and_roll_back(lane, opts):
    with Journal.open(lane, **opts) as journal:
        journal.append_add_tx(5, 1, body_of(1, 60_000))
        journal.append_add_tx(5, 2, body_of(2, 60_000))
        journal.commit(5)
        journal.append_add_tx(6, 3, body_of(3, 60_000))
        journal.rollback(6)
        journal.append_add_tx(7, 4, body_of(4, 60_000))       # open at close: rolled back
    with Journal.open(lane, **opts) as journal:
        assert live(journal) == {1: body_of(1, 60_000), 2: body_of(2, 60_000)}
        assert journal.report.rolled_back_tx_ids == [7]


# --- crashes and damage ----------------------------------------------------------------------
def test_torn_large_record_at_tail_is_end_of_data(lane, opts):
    with Journal.open(lane, **opts) as journal:
        for record_id in range(1, 6):
            journal.append_add(record_id, body_of(record_id, 300))
        journal.append_add(6, body_of(6, 100_000))
    path, _fid, records = extents(lane)[-1]
    (before, before_size, _), (offset, size, record_id) = records[-2:]
    assert record_id == 6
    # The big write was torn: its second half never reached the disk.
    patch(path, offset + size // 2, bytes(size - size // 2))
    with Journal.open(lane, **opts) as journal:
        assert sorted(live(journal)) == [1, 2, 3, 4, 5]
        torn = journal.report.torn_tail
        # data ends after record 5 (the rest of its block is padding)
        assert torn is not None and torn.file == path and torn.offset == before + before_size
        assert torn.records_dropped == 0
        assert journal.report.recoveries == [] and journal.report.attic == []
        journal.append_add(7, body_of(7, 100_000))
    with Journal.open(lane, **opts) as journal:
        assert sorted(live(journal)) == [1, 2, 3, 4, 5, 7]
        assert journal.report.torn_tail is None


def test_big_record_whose_first_block_was_lost_is_end_of_data(lane, opts):
    with Journal.open(lane, **opts) as journal:
        journal.append_add(1, body_of(1, 300))
        journal.append_add(2, body_of(2, 100_000))
    path, _fid, records = extents(lane)[-1]
    offset = records[-1][0]
    patch(path, offset, bytes(512))                        # zeros, as the fresh file held
    with Journal.open(lane, **opts) as journal:
        assert sorted(live(journal)) == [1]
        assert journal.report.recoveries == []
        journal.append_add(3, b"after the lost record")
    with Journal.open(lane, **opts) as journal:
        assert live(journal) == {1: body_of(1, 300), 3: b"after the lost record"}


def test_crc_flip_inside_big_record_before_the_tail_is_corruption(lane, opts):
    with Journal.open(lane, **opts) as journal:
        journal.append_add(1, body_of(1, 100_000))           # larger than the 64k window
        journal.append_add(2, b"acknowledged after it")
    path, _fid, records = extents(lane)[-1]
    offset = records[0][0]
    flip(path, offset + layout.RECORD_HEADER_SIZE + 80_000)
    with pytest.raises(CorruptJournalError) as caught:
        Journal.open(lane, **opts)
    assert (caught.value.path, caught.value.offset) == (path, offset)


def test_crc_flip_inside_big_record_of_a_sealed_file_is_detected_on_reopen(lane, opts):
    with Journal.open(lane, **opts) as journal:
        journal.append_add(1, body_of(1, 200_000))
        journal.append_add(2, body_of(2, 200_000))           # rolls: file 1 is sealed
    (path, _fid, records), _second = extents(lane)
    offset, size, _ = records[0]
    flip(path, offset + size - 20)
    with pytest.raises(CorruptJournalError) as caught:
        Journal.open(lane, **opts)
    assert (caught.value.path, caught.value.offset) == (path, offset)
    with Journal.open(lane, recover=True, **opts) as journal:
        assert live(journal) == {2: body_of(2, 200_000)}
        [recovery] = journal.report.recoveries
        assert (recovery.file, recovery.offset) == (path, offset)


# --- the sync window ----------------------------------------------------------------------------
class SpyFile:
    """Passes every call to the real file and records it (real disk, real syncs)."""

    def __init__(self, real, log):
        self.real, self.log = real, log

    def write(self, data, offset):
        self.log.append(("write", self.real.path, offset, memoryview(data).nbytes))
        self.real.write(data, offset)

    def write_durably(self, data, offset):
        self.write(data, offset)
        self.sync()

    def sync(self):
        self.real.sync()
        self.log.append(("sync", self.real.path, 0, 0))

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_writer_never_has_more_than_the_window_unsynced_except_a_record_alone(lane, opts, monkeypatch):
    log: list = []
    real_choose = journal_module.choose_factory

    def spying_factory(path, config):
        factory = real_choose(path, config)
        real_open = factory.open
        factory.open = lambda file_path: SpyFile(real_open(file_path), log)
        return factory

    monkeypatch.setattr(journal_module, "choose_factory", spying_factory)
    with Journal.open(lane, **opts) as journal:
        for record_id in range(1, 400):
            size = 90_000 if record_id % 97 == 0 else 1000
            journal.append_add(record_id, body_of(record_id, size), sync=False)
        journal.flush()
    unsynced: dict = {}
    alone_pending = None
    for kind, path, offset, length in log:
        if kind == "sync":
            unsynced[path], alone_pending = 0, None
            continue
        assert alone_pending is None, "a write followed a record written alone before its sync"
        if offset == 0:
            continue                                         # a rolled file's header: no record
        if length > WINDOW:
            assert unsynced.get(path, 0) == 0, "a record written alone after unsynced records"
            alone_pending = path
        unsynced[path] = unsynced.get(path, 0) + length
        assert length > WINDOW or unsynced[path] <= WINDOW
    with Journal.open(lane, **opts) as journal:
        assert len(journal) == 399
