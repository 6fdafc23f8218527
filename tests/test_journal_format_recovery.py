"""One scenario per test (LevelDB's style, Artemis's JournalImplTestUnit bar):
each test sets up exactly one situation on disk, reopens the lane, and checks
both what came back (records, prepared transactions) and what the load
reported (LoadReport: torn tail, attic, recoveries, rolled back / broken txs).
"""
from __future__ import annotations

import contextlib
import os
import signal
import struct
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from sparkjournal import (ConfigError, CorruptJournalError, FormatVersionError, Journal,
                          JournalConfig, JournalLockedError, JournalRoot, load_config)
from sparkjournal.format import layout
from sparkjournal.format.codec import CODEC
from sparkjournal.journal.loader import load
from lane_surgery import flip, patch, read_at, scan_lane

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- helpers ------------------------------------------------------------------------------
def body_of(record_id: int, size: int = 100) -> bytes:
    seed = f"record-{record_id}:".encode()
    return (seed * (size // len(seed) + 1))[:size]


def live(snapshot) -> dict:
    return {r.record_id: (r.user_type, bytes(r.body)) for r in snapshot.records()}


def fill(journal, ids, size: int = 100, user_type: int = 1) -> None:
    for record_id in ids:
        journal.append_add(record_id, body_of(record_id, size), user_type=user_type)


def data_files(lane: str) -> list[str]:
    return sorted(n for n in os.listdir(lane) if n.startswith("data-") and n.endswith(".sjd"))


def rewrite_header(path: str, **changes) -> None:
    """Rewrites the header fields of a data file, with a correct CRC."""
    raw = read_at(path, 0, layout.FILE_HEADER.size)
    names = ["magic", "version", "user_version", "file_id", "file_size", "block_size",
             "sealed", "window", "created", "prev_file_id", "prev_end", "max_record_id",
             "max_tx_id"]
    fields = dict(zip(names, layout.FILE_HEADER.unpack(raw)))
    fields.update(changes)
    fixed = layout.FILE_HEADER.pack(*(fields[n] for n in names))
    patch(path, 0, fixed + CODEC.crc32c(fixed).to_bytes(4, "little"))


def two_sealed_files(lane, options, per_file_guess=600):
    """Writes adds until the lane has at least three files with data; returns the
    ids written and the scan."""
    with Journal.open(lane, **options) as journal:
        record_id = 0
        while True:
            record_id += 1
            journal.append_add(record_id, body_of(record_id), user_type=1, sync=False)
            if record_id % 50 == 0:
                journal.flush()
                if len([f for f in journal.files]) >= 3:
                    break
            assert record_id < per_file_guess * 10
    return list(range(1, record_id + 1)), scan_lane(lane)


# --- torn tails ---------------------------------------------------------------------------
def test_truncated_tail_is_end_of_data(lane, options):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 21))
    newest = scan_lane(lane)[-1]
    previous, last = newest.records[-2:]
    assert last.record_id == 20
    # The last record's write was torn: its second half never reached the disk.
    half = last.size // 2
    patch(newest.path, last.offset + half, bytes(last.size - half))

    with Journal.open(lane, **options) as journal:
        assert live(journal) == {i: (1, body_of(i)) for i in range(1, 20)}
        torn = journal.report.torn_tail
        # The torn tail begins where the data ends: after record 19 (the rest of
        # its block is padding).
        assert torn is not None and torn.file == newest.path
        assert torn.offset == previous.offset + previous.size
        assert torn.records_dropped == 0
        assert journal.report.recoveries == [] and journal.report.attic == []
        journal.append_add(21, body_of(21), user_type=1)
    with Journal.open(lane, **options) as journal:
        # The writer zeroed the torn bytes: the next load is clean and has the new record.
        assert journal.report.torn_tail is None
        assert sorted(live(journal)) == list(range(1, 20)) + [21]


def test_torn_write_with_later_record_in_sync_window_is_dropped_and_reported(lane, options):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 21))
    newest = scan_lane(lane)[-1]
    kept, victim, after = newest.records[-3:]
    assert (victim.record_id, after.record_id) == (19, 20)
    # One block of the last flush never reached the disk; a later one did.
    flip(newest.path, victim.offset + layout.RECORD_HEADER_SIZE + 3)

    snapshot = Journal.read(lane, **options)
    assert live(snapshot) == {i: (1, body_of(i)) for i in range(1, 19)}
    torn = snapshot.report.torn_tail
    assert torn is not None and torn.file == newest.path
    assert torn.offset == kept.offset + kept.size
    assert torn.records_dropped == 1
    assert torn.bytes_dropped == after.offset + after.size - torn.offset
    snapshot.close()

    with Journal.open(lane, **options) as journal:
        assert sorted(live(journal)) == list(range(1, 19))
        journal.append_add(100, body_of(100), user_type=1)
    with Journal.open(lane, **options) as journal:
        # Record 20 (never acknowledged) must not reappear behind the new data.
        assert sorted(live(journal)) == list(range(1, 19)) + [100]
        assert journal.report.torn_tail is None


def test_torn_tail_past_an_earlier_smaller_sync_window_is_still_a_torn_tail(lane, backend):
    """A writer whose sync window is larger than the one the current file's header
    promises (bufferSize raised between runs) rolls into a fresh file before its
    first append, so a crash's tail up to its own window loads as a torn tail."""
    small = {"fileSize": "256k", "bufferSize": "4k", "maxIO": 1, "journalType": backend}
    large = dict(small, bufferSize="32k")
    with Journal.open(lane, **small) as journal:
        fill(journal, range(1, 11))
    before = scan_lane(lane)[-1]
    with Journal.open(lane, **large) as journal:
        fill(journal, range(11, 131))               # ~13 KiB past the small window's 4 KiB
    newest = scan_lane(lane)[-1]
    assert newest.file_id > before.file_id, "the writer kept appending under the small window"
    assert [r.record_id for r in newest.records] == list(range(11, 131))
    end = newest.records[-1].offset + newest.records[-1].size
    at = next(i for i, r in enumerate(newest.records) if 3 * 4096 < end - r.offset < 32 * 1024)
    kept, victim = newest.records[at - 1], newest.records[at]
    flip(newest.path, victim.offset + layout.RECORD_HEADER_SIZE + 3)    # a block never landed
    with Journal.open(lane, **large) as journal:
        torn = journal.report.torn_tail
        assert torn is not None and torn.file == newest.path
        assert (torn.offset, torn.records_dropped) == (kept.offset + kept.size, 130 - victim.record_id)
        assert sorted(live(journal)) == list(range(1, victim.record_id))


def words_naming(file_id: int, record_type: int = 0) -> bytes:
    """40 bytes with the file's id where a record header keeps it and a CRC
    that cannot match; type 0: what a stale body may hold by chance."""
    header = bytearray(layout.RECORD_HEADER_SIZE)
    struct.pack_into("<IB", header, 0, 43, record_type)
    struct.pack_into("<I", header, 8, layout.file_id32(file_id))
    return bytes(header)


def test_stale_bytes_naming_the_file_past_its_data_are_end_of_data_not_a_torn_record(lane, options):
    ids, scanned = two_sealed_files(lane, options)
    planted = 0
    for data in scanned:
        end = data.records[-1].offset + data.records[-1].size
        if end + layout.RECORD_HEADER_SIZE <= os.path.getsize(data.path):
            patch(data.path, end, words_naming(data.file_id))
            planted += 1
    assert planted >= 2, "no room after the data of a sealed file and of the newest"
    with Journal.open(lane, **options) as journal:
        assert journal.report.torn_tail is None and journal.report.recoveries == []
        assert sorted(live(journal)) == ids
    newest = scan_lane(lane)[-1]
    end = newest.records[-1].offset + newest.records[-1].size
    patch(newest.path, end, words_naming(newest.file_id, layout.ADD))   # a header its writer wrote
    with Journal.open(lane, **options) as journal:
        torn = journal.report.torn_tail
        assert torn is not None and (torn.file, torn.offset, torn.records_dropped) == \
            (newest.path, end, 0)
        assert sorted(live(journal)) == ids


# --- corruption before the tail -----------------------------------------------------------
def test_checksum_mismatch_before_tail_fails_open_naming_file_and_offset(lane, options):
    ids, scanned = two_sealed_files(lane, options)
    sealed = scanned[0]
    victim = sealed.records[len(sealed.records) // 2]
    flip(sealed.path, victim.offset + layout.RECORD_HEADER_SIZE + 10)
    before = sorted(os.listdir(lane))

    with pytest.raises(CorruptJournalError) as caught:
        Journal.open(lane, **options)
    assert caught.value.path == sealed.path
    assert caught.value.offset == victim.offset
    assert sealed.path in str(caught.value) and str(victim.offset) in str(caught.value)
    with pytest.raises(CorruptJournalError) as caught_read:
        Journal.read(lane, **options)
    assert (caught_read.value.path, caught_read.value.offset) == (sealed.path, victim.offset)
    # Nothing was changed on disk, and the failed open released the lock.
    assert sorted(os.listdir(lane)) == before
    with pytest.raises(CorruptJournalError):
        Journal.open(lane, **options)


def test_damage_in_newest_file_beyond_sync_window_is_corruption(lane, backend):
    # Window = maxIO x bufferSize = 4k: damage 8k before the last record cannot be a torn write.
    options = {"fileSize": "256k", "bufferSize": "4k", "maxIO": 1, "journalType": backend}
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 201))
    newest = scan_lane(lane)[-1]
    end = newest.records[-1].offset + newest.records[-1].size
    victim = next(r for r in newest.records if end - r.offset > 3 * 4096)
    flip(newest.path, victim.offset + layout.RECORD_HEADER_SIZE)
    with pytest.raises(CorruptJournalError) as caught:
        Journal.open(lane, **options)
    assert (caught.value.path, caught.value.offset) == (newest.path, victim.offset)


def test_damaged_last_record_of_sealed_file_is_corruption(lane, options):
    ids, scanned = two_sealed_files(lane, options)
    sealed = scanned[0]
    last = sealed.records[-1]
    # Zeroing the sealed file's last record looks like a clean end of data; the
    # successor's header ("previous file's end") says otherwise.
    patch(sealed.path, last.offset, bytes(last.size))
    with pytest.raises(CorruptJournalError) as caught:
        Journal.open(lane, **options)
    assert caught.value.path == sealed.path
    assert caught.value.offset == last.offset


def test_recovery_mode_moves_damaged_file_to_attic_and_reports_loss(lane, options):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 11))
        journal.append_add_tx(7, 500, body_of(500))
        journal.commit(7)
        first_file = journal.files[0]
        record_id = 10
        while len(journal.files) < 2:
            record_id += 1
            journal.append_add(record_id, body_of(record_id), user_type=1, sync=False)
        journal.flush()
    scanned = scan_lane(lane)
    damaged = scanned[0]
    assert damaged.path == first_file.path
    in_damaged = {e.record_id for e in damaged.records if e.rtype == layout.ADD}
    elsewhere = set(range(1, record_id + 1)) - in_damaged
    assert 500 not in elsewhere and elsewhere
    # Record 3 is deleted in the second file: it is not live, so it is not lost.
    with Journal.open(lane, **options) as journal:
        journal.append_delete(3)
        journal.append_add(9000, body_of(9000), user_type=2)
    victim = damaged.records[1]
    flip(damaged.path, victim.offset + layout.RECORD_HEADER_SIZE + 1)

    with pytest.raises(CorruptJournalError):
        Journal.open(lane, **options)
    with Journal.open(lane, recover=True, **options) as journal:
        assert len(journal.report.recoveries) == 1
        recovery = journal.report.recoveries[0]
        assert recovery.file == damaged.path
        assert recovery.offset == victim.offset
        assert os.path.dirname(recovery.moved_to) == os.path.join(lane, "attic")
        assert os.path.exists(recovery.moved_to) and not os.path.exists(damaged.path)
        # Every record the file still holds intact (before and after the damage)
        # is named; the damaged record itself cannot be identified (its CRC
        # covers the header that names it), the report gives its offset instead.
        assert victim.record_id == 2
        assert recovery.lost_record_ids == sorted((in_damaged - {2, 3}) | {500})
        assert recovery.lost_tx_ids == [7]
        expected = {i: (1, body_of(i)) for i in elsewhere if i != 3}
        expected[9000] = (2, body_of(9000))
        assert live(journal) == expected
        journal.append_add(9001, body_of(9001))
    # The lane is whole again: a plain open works and reports nothing.
    with Journal.open(lane, **options) as journal:
        assert journal.report.recoveries == [] and journal.report.torn_tail is None
        assert 9001 in live(journal) and 500 not in live(journal)


# --- file reuse and transactions across files ----------------------------------------------
def test_stale_record_in_reused_file_is_invisible(lane, options):
    seen = {}          # path -> set of file ids it has had
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 1501))                 # several files
        for data_file in journal.files:
            seen.setdefault(data_file.path, set()).add(data_file.file_id)
        for record_id in range(1, 1501):
            journal.append_delete(record_id, sync=False)
        journal.flush()
        fill(journal, range(2001, 2801), size=60)     # rolls: dead files are freed and reused
        reused = False
        for data_file in journal.files:
            ids = seen.setdefault(data_file.path, set())
            reused |= bool(ids) and data_file.file_id not in ids
            ids.add(data_file.file_id)
        assert reused, "no freed file was written again: the test did not exercise reuse"
    with Journal.open(lane, **options) as journal:
        assert live(journal) == {i: (1, body_of(i, 60)) for i in range(2001, 2801)}
        assert journal.report.torn_tail is None and journal.report.recoveries == []
        assert journal.report.attic == []


def test_commit_count_mismatch_across_files_is_not_applied(lane, options):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 6))
        for i in range(3):
            journal.append_add_tx(77, 100_000 + i, body_of(100_000 + i))
        record_id = 5
        start_files = len(journal.files)
        while len(journal.files) == start_files:          # roll into a second file
            record_id += 1
            journal.append_add(record_id, body_of(record_id), user_type=1, sync=False)
        journal.append_add_tx(77, 200_000, body_of(200_000))
        journal.append_add_tx(77, 200_001, body_of(200_001))
        journal.commit(77)
    scanned = scan_lane(lane)
    tx_files = [f for f in scanned if any(e.tx_id == 77 for e in f.records)]
    assert len(tx_files) == 2
    commit_file = tx_files[1]
    commit = next(e for e in commit_file.records if e.rtype == layout.COMMIT)
    victim = next(e for e in commit_file.records if e.record_id == 200_001)
    assert victim.offset < commit.offset
    # The record vanishes without a trace (zeros are padding to the scanner):
    # only the COMMIT's per-file count can tell.
    patch(commit_file.path, victim.offset, bytes(victim.size))

    with Journal.open(lane, **options) as journal:
        assert journal.report.broken_tx_ids == [77]
        assert journal.report.torn_tail is None
        records = live(journal)
        assert not {100_000, 100_001, 100_002, 200_000, 200_001} & set(records)
        assert records == {i: (1, body_of(i)) for i in range(1, record_id + 1)}
        assert journal.prepared() == []


def test_writer_reads_its_own_unflushed_records(lane, options):
    with Journal.open(lane, bufferTimeout="10s", **options) as journal:
        journal.append_add(1, b"not yet written", sync=False)
        journal.append_add_tx(2, 2, b"tx body")
        journal.commit(2, sync=False)
        journal.append_update(1, b"updated, not yet written", user_type=5, sync=False)
        assert live(journal) == {1: (5, b"updated, not yet written"), 2: (0, b"tx body")}
    with Journal.open(lane, **options) as journal:
        assert live(journal) == {1: (5, b"updated, not yet written"), 2: (0, b"tx body")}


# --- headers ------------------------------------------------------------------------------
def test_header_only_file_loads_empty(lane, options):
    Journal.open(lane, **options).close()
    assert len(data_files(lane)) == 2
    snapshot = Journal.read(lane, **options)
    assert len(snapshot) == 0 and list(snapshot.records()) == []
    assert snapshot.report.records_scanned == 0 and snapshot.report.torn_tail is None
    assert snapshot.report.warnings == [] and snapshot.report.attic == []
    snapshot.close()
    with Journal.open(lane, **options) as journal:
        assert len(journal) == 0 and journal.prepared() == []
        assert journal.report.torn_tail is None and journal.report.warnings == []
        journal.append_add(1, b"one")
    with Journal.open(lane, **options) as journal:
        assert live(journal) == {1: (0, b"one")}


def test_wrong_size_file_goes_to_attic(lane, options):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 11))
        spare = journal.free_files[0].path
    with open(spare, "ab") as handle:
        handle.write(b"\0" * 4096)
    grown = read_at(spare, 0, 1 << 20)

    snapshot = Journal.read(lane, **options)          # a reader skips it, moves nothing
    assert os.path.exists(spare) and any(spare in w for w in snapshot.report.warnings)
    assert sorted(live(snapshot)) == list(range(1, 11))
    snapshot.close()
    with Journal.open(lane, **options) as journal:
        moved = os.path.join(lane, "attic", os.path.basename(spare))
        assert journal.report.attic == [moved]
        assert any(spare in w for w in journal.report.warnings)
        assert sorted(live(journal)) == list(range(1, 11))
        fill(journal, range(11, 1200))                # rolls, reclaim: the attic is left alone
    assert read_at(moved, 0, 1 << 20) == grown
    with Journal.open(lane, **options) as journal:
        assert journal.report.attic == []
        assert len(journal) == 1199
    assert os.path.exists(moved)


@pytest.mark.parametrize("damage", ["magic", "header crc"])
def test_bad_header_goes_to_attic(lane, options, damage):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 11))
        spare = journal.free_files[0].path
    if damage == "magic":
        patch(spare, 0, b"XXXXXXXX")
    else:
        flip(spare, 20)                      # inside the file id: the header CRC no longer matches
    content = read_at(spare, 0, 1 << 20)
    with Journal.open(lane, **options) as journal:
        moved = os.path.join(lane, "attic", os.path.basename(spare))
        assert journal.report.attic == [moved]
        assert sorted(live(journal)) == list(range(1, 11))
    assert read_at(moved, 0, 1 << 20) == content


def test_newer_format_version_is_refused(lane, options):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 11))
        path = journal.files[0].path
    rewrite_header(path, version=layout.FORMAT_VERSION + 1)
    before = {n: read_at(os.path.join(lane, n), 0, 1 << 20) for n in data_files(lane)}
    with pytest.raises(FormatVersionError) as caught:
        Journal.open(lane, **options)
    assert caught.value.path == path and caught.value.found == layout.FORMAT_VERSION + 1
    assert "upgrade" in str(caught.value)
    with pytest.raises(FormatVersionError):
        Journal.read(lane, **options)
    with pytest.raises(FormatVersionError):
        Journal.open(lane, recover=True, **options)
    after = {n: read_at(os.path.join(lane, n), 0, 1 << 20) for n in data_files(lane)}
    assert after == before and not os.path.exists(os.path.join(lane, "attic"))


# --- transactions on load -----------------------------------------------------------------
def prepared_scenario(lane, options, outcome):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 4))
        journal.append_add_tx(5, 10, body_of(10), user_type=4)
        journal.append_update_tx(5, 1, b"updated", user_type=4)
        journal.append_delete_tx(5, 2)
        journal.prepare(5, xid=b"xid-5")
    with Journal.open(lane, **options) as journal:
        assert journal.report.prepared_tx_ids == [5]
        assert journal.report.rolled_back_tx_ids == []
        [prepared] = journal.prepared()
        assert (prepared.tx_id, prepared.xid, prepared.record_ids) == (5, b"xid-5", [10, 1, 2])
        assert live(journal) == {i: (1, body_of(i)) for i in range(1, 4)}
        getattr(journal, outcome)(5)
        assert journal.prepared() == []
    if outcome == "commit":
        expected = {1: (4, b"updated"), 3: (1, body_of(3)), 10: (4, body_of(10))}
    else:
        expected = {i: (1, body_of(i)) for i in range(1, 4)}
    with Journal.open(lane, **options) as journal:
        assert journal.prepared() == [] and journal.report.prepared_tx_ids == []
        assert live(journal) == expected


def test_prepared_tx_is_handed_back_and_can_be_committed(lane, options):
    prepared_scenario(lane, options, "commit")


def test_prepared_tx_is_handed_back_and_can_be_rolled_back(lane, options):
    prepared_scenario(lane, options, "rollback")


def test_unprepared_open_tx_is_rolled_back_on_open(lane, options):
    with Journal.open(lane, **options) as journal:
        fill(journal, range(1, 4))
        journal.append_add_tx(9, 50, body_of(50))
        journal.append_delete_tx(9, 1)
        journal.flush()
    snapshot = Journal.read(lane, **options)     # a reader changes nothing, applies nothing
    assert sorted(live(snapshot)) == [1, 2, 3] and snapshot.prepared() == []
    snapshot.close()
    with Journal.open(lane, **options) as journal:
        assert journal.report.rolled_back_tx_ids == [9]
        assert sorted(live(journal)) == [1, 2, 3]
        assert journal.prepared() == []
        journal.append_add_tx(9, 60, body_of(60))    # the id is free again
        journal.commit(9)
    with Journal.open(lane, **options) as journal:
        assert journal.report.rolled_back_tx_ids == []     # the ROLLBACK was written
        assert sorted(live(journal)) == [1, 2, 3, 60]


# --- large records ----------------------------------------------------------------------------
# Bodies here are larger than a 64k data file: only those go to large/ (smaller
# ones above bufferSize are written alone into a data file: test_big_records.py).
def large_bodies(lane):
    folder = os.path.join(lane, "large")
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


def test_large_record_round_trip(lane, options):
    big = os.urandom(140_000)                        # > fileSize (64k)
    with Journal.open(lane, **options) as journal:
        journal.append_add(1, big, user_type=9)
        journal.append_add(2, b"small")
        journal.append_update(2, big[:70_000], user_type=3)
        assert bytes(journal.get(1).body) == big
    assert len(large_bodies(lane)) == 2            # record 1, and record 2's update
    with Journal.open(lane, **options) as journal:
        rec = journal.get(1)
        assert rec.large and rec.user_type == 9 and rec.body_len != 0
        assert bytes(rec.body) == big
        assert journal.get(2).large and bytes(journal.get(2).body) == big[:70_000]
        assert journal.report.orphan_bodies_removed == 0


def test_orphan_large_body_removed_on_load(lane, options):
    big = os.urandom(70_000)
    with Journal.open(lane, **options) as journal:
        journal.append_add(1, big)
    kept = large_bodies(lane)
    assert len(kept) == 1
    folder = os.path.join(lane, "large")
    orphan = os.path.join(folder, "00000000deadbeef.body")
    unfinished = os.path.join(folder, "00000000feedface.body.tmp")
    for path in (orphan, unfinished):
        with open(path, "wb") as handle:
            handle.write(b"crash debris")
    snapshot = Journal.read(lane, **options)         # readers never delete
    assert os.path.exists(orphan) and os.path.exists(unfinished)
    snapshot.close()
    with Journal.open(lane, **options) as journal:
        assert journal.report.orphan_bodies_removed == 1
        assert bytes(journal.get(1).body) == big
    assert large_bodies(lane) == kept


def test_large_record_rolled_back_leaves_no_body(lane, options):
    with Journal.open(lane, **options) as journal:
        journal.append_add(1, b"small")
        journal.append_add_tx(3, 2, os.urandom(70_000))
        assert len(large_bodies(lane)) == 1
        journal.rollback(3)
    with Journal.open(lane, **options) as journal:
        assert sorted(live(journal)) == [1]
    assert large_bodies(lane) == []


def test_large_record_deleted_leaves_no_body(lane, options):
    with Journal.open(lane, **options) as journal:
        journal.append_add(1, os.urandom(70_000))
        journal.append_delete(1)
    with Journal.open(lane, **options) as journal:
        assert len(journal) == 0
    assert large_bodies(lane) == []


# --- the writer lock ----------------------------------------------------------------------
HOLDER = textwrap.dedent("""
    import sys
    from sparkjournal import Journal
    journal = Journal.open(sys.argv[1], journalType="NIO", fileSize="64k", bufferSize="16k")
    journal.append_add(1, b"from the child")
    print("locked", flush=True)
    sys.stdin.readline()
    journal.close()
    print("released", flush=True)
    sys.stdin.readline()
""")


def spawn(code: str, *args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env, cwd=REPO)


@contextlib.contextmanager
def lock_holder(lane):
    """A child process that holds the lane's writer lock (it says "locked");
    killed on the way out if it is still running."""
    child = spawn(HOLDER, lane)
    try:
        assert child.stdout.readline().strip() == "locked"
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()


def test_second_writer_gets_clear_lock_error(lane, options):
    with lock_holder(lane) as child:
        with pytest.raises(JournalLockedError) as caught:
            Journal.open(lane, **options)
        message = str(caught.value)
        assert lane in message and str(child.pid) in message and "lockWait" in message
        # A reader needs no lock.
        with Journal.read(lane, **options) as snapshot:
            assert live(snapshot) == {1: (0, b"from the child")}


def test_lock_wait_waits_for_the_writer_to_close(lane, options):
    released = threading.Event()
    with lock_holder(lane) as child:
        def release_later():
            time.sleep(0.5)            # no timing assertion: only the order of events is checked
            released.set()
            child.stdin.write("\n")
            child.stdin.flush()

        threading.Thread(target=release_later, daemon=True).start()
        with Journal.open(lane, lockWait=True, **options) as journal:
            assert released.is_set(), "lockWait returned while the other writer held the lock"
            assert child.stdout.readline().strip() == "released"
            assert live(journal) == {1: (0, b"from the child")}


def test_lock_of_killed_writer_is_free(lane, options):
    with lock_holder(lane) as child:
        with pytest.raises(JournalLockedError):
            Journal.open(lane, **options)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        with Journal.open(lane, **options) as journal:
            assert live(journal) == {1: (0, b"from the child")}


def test_reader_reads_lane_while_writer_appends(lane, options):
    acked_live: dict[int, bytes] = {}     # acknowledged adds minus deletes issued
    deleting: set[int] = set()            # deletes issued (acknowledged or not)
    lock = threading.Lock()
    done = threading.Event()
    errors = []

    def writer(journal):
        try:
            for record_id in range(1, 2001):
                body = body_of(record_id, 80)
                journal.append_add(record_id, body, user_type=1)
                with lock:
                    acked_live[record_id] = body
                if record_id > 50 and record_id % 3 == 0:       # dead files get reused
                    with lock:
                        deleting.add(record_id - 50)
                        del acked_live[record_id - 50]
                    journal.append_delete(record_id - 50)
        except BaseException as error:  # noqa: BLE001
            errors.append(error)
        finally:
            done.set()

    with Journal.open(lane, **options) as journal:
        journal.append_add(0, b"first", user_type=1)
        thread = threading.Thread(target=writer, args=(journal,))
        thread.start()
        reads = 0
        while not done.is_set() or reads == 0:
            with lock:
                before = dict(acked_live)
            with Journal.read(lane, **options) as snapshot:
                seen = live(snapshot)
            with lock:
                deleted_since = set(deleting)
            reads += 1
            for record_id, (user_type, body) in seen.items():
                assert (user_type, body) == (1, body_of(record_id, 80) if record_id else b"first")
            missing = [r for r in before if r not in seen and r not in deleted_since]
            assert missing == [], f"read {reads} lost acknowledged records {missing[:10]}"
            assert 0 in seen
        thread.join()
        assert not errors, errors
    with Journal.read(lane, **options) as snapshot:
        assert {r: b for r, (_, b) in live(snapshot).items() if r} == acked_live


def test_lanes_first_free_lane_taken(tmp_path, small_options):
    root = str(tmp_path / "root")
    code = textwrap.dedent("""
        import os, sys
        from sparkjournal import JournalRoot
        journal = JournalRoot(sys.argv[1], journalType="NIO", fileSize="64k",
                              bufferSize="16k").open_writer()
        journal.append_add(1, os.path.basename(journal.directory).encode())
        print(os.path.basename(journal.directory), flush=True)
        sys.stdin.readline()
    """)
    first = spawn(code, root)
    try:
        assert first.stdout.readline().strip() == "lane-000"
        second = spawn(code, root)
        try:
            assert second.stdout.readline().strip() == "lane-001"
            lanes = JournalRoot(root, **small_options).read_lanes()
            assert sorted(lanes) == ["lane-000", "lane-001"]
            for name, snapshot in lanes.items():
                assert live(snapshot) == {1: (0, name.encode())}
                snapshot.close()
        finally:
            second.kill()
            second.wait()
        # lane-001 is free again; lane-000 is still held.
        with JournalRoot(root, **small_options).open_writer() as journal:
            assert os.path.basename(journal.directory) == "lane-001"
    finally:
        first.kill()
        first.wait()
    with JournalRoot(root, **small_options).open_writer() as journal:
        assert os.path.basename(journal.directory) == "lane-000"


# --- reclaim ----------------------------------------------------------------------------------
def churn(journal, rounds: int, per_round: int = 300, after_round=None) -> list:
    """Adds a round of records, deletes the previous round: files die and are
    reclaimed. Returns the ids of the last round (still live)."""
    previous = []
    next_id = 1
    for _ in range(rounds):
        if after_round is not None:
            after_round()
        ids = list(range(next_id, next_id + per_round))
        next_id += per_round
        fill(journal, ids)
        for record_id in previous:
            journal.append_delete(record_id, sync=False)
        journal.flush()
        previous = ids
    return previous


def test_reclaim_reuses_freed_files(lane, options):
    with Journal.open(lane, **options) as journal:
        last_round = churn(journal, rounds=12)
        on_disk = data_files(lane)
        # Each synced add fills a 512-byte block: 12 rounds need ~30 files of 64k
        # without reuse; about two rounds are live at a time.
        assert len(on_disk) <= 10, on_disk
        ids_now = {f.file_id for f in journal.files + journal.free_files}
        assert max(ids_now) >= 3 * len(on_disk)      # few files, many ids: reused
    with Journal.open(lane, **options) as journal:
        assert live(journal) == {i: (1, body_of(i)) for i in last_round}


def test_reclaim_with_pool_files_zero_deletes(lane, options):
    created = set()
    with Journal.open(lane, poolFiles=0, **options) as journal:
        last_round = churn(journal, rounds=12,
                           after_round=lambda: created.update(data_files(lane)))
        on_disk = set(data_files(lane))
        assert created - on_disk, "no freed file was deleted"
        assert len(on_disk) <= 10, on_disk
        assert len(created) >= 2 * len(on_disk)
        assert journal.free_files == []
        assert not os.path.exists(os.path.join(lane, "archive"))
    with Journal.open(lane, **options) as journal:
        assert live(journal) == {i: (1, body_of(i)) for i in last_round}


def test_reclaim_with_archive_moves_to_archive(lane, options):
    with Journal.open(lane, archive=True, **options) as journal:
        last_round = churn(journal, rounds=6)
        archive = os.path.join(lane, "archive")
        archived = sorted(os.listdir(archive))
        assert archived, "nothing was archived"
        assert not set(archived) & set(data_files(lane))
        for name in archived:                       # archived files keep their content
            assert os.path.getsize(os.path.join(archive, name)) == 64 * 1024
            assert read_at(os.path.join(archive, name), 0, 8) == layout.FILE_MAGIC
    with Journal.open(lane, **options) as journal:
        assert live(journal) == {i: (1, body_of(i)) for i in last_round}


# --- configuration and backend --------------------------------------------------------------
@pytest.mark.parametrize("key,value,accepted", [
    ("fileSize", "10x", "10m"),
    ("journalType", "FOO", "ASYNCIO"),
    ("maxIO", 0, "whole number"),
    ("bufferTimeout", "soon", "500us"),
    ("syncTransactional", "maybe", "true or false"),
    ("fileSize", "5000", "multiple of 4k"),
    ("noSuchOption", "1", "fileSize"),
])
def test_config_rejects_bad_values_naming_the_key(tmp_path, key, value, accepted):
    with pytest.raises(ConfigError) as caught:
        load_config({key: value})
    assert caught.value.key == key
    assert key in str(caught.value) and accepted in str(caught.value)
    lane = str(tmp_path / "lane")
    with pytest.raises(ConfigError) as caught_open:
        Journal.open(lane, **{key: value})
    assert caught_open.value.key == key
    assert not os.path.exists(lane)


def test_conf_file_matches_defaults(monkeypatch):
    monkeypatch.delenv("SPARKJOURNAL_CONF", raising=False)
    conf = os.path.join(REPO, "conf", "sparkjournal.conf")
    assert load_config(conf_file=conf) == JournalConfig()
    assert load_config() == JournalConfig()


def test_backend_reported(tmp_path):
    with Journal.open(str(tmp_path / "nio"), journalType="NIO", fileSize="64k",
                      bufferSize="16k") as journal:
        assert journal.backend == "NIO"
        assert "journalType=NIO" in journal.backend_reason
    pytest.importorskip("sparkjournal._sjnative",
                        reason="the C core is not built: AUTO cannot pick ASYNCIO")
    with Journal.open(str(tmp_path / "auto"), fileSize="64k", bufferSize="16k") as journal:
        assert journal.backend == "ASYNCIO"
        assert "O_DIRECT" in journal.backend_reason
    with Journal.open(str(tmp_path / "aio"), journalType="ASYNCIO", fileSize="64k",
                      bufferSize="16k") as journal:
        assert journal.backend == "ASYNCIO"
        assert "journalType=ASYNCIO" in journal.backend_reason
