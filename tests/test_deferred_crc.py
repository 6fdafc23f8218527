"""A snapshot that defers the CRC checks of big records (Journal.read(...,
defer_crc=True), deferred_crc.py) reads exactly what a full check reads, and
never lets damage through: damage is reported when the record is read, or by
check_deferred for records never read, naming the file and offset."""
from __future__ import annotations

import os
import random
import shutil

import pytest

from sparkjournal import CorruptJournalError, Journal, JournalSink
from sparkjournal.format import layout
from sparkjournal.journal.deferred_crc import DEFER_MIN_BODY
from sparkjournal.journal.lanes import list_lanes
from sparkjournal.journal.loader import scan_lane
from sparkjournal.journal.records import LoadReport

OPTIONS = {"fileSize": "1m", "minFiles": 2, "journalType": "NIO"}
BIG = 100 << 10


def big_body(record_id: int) -> bytes:
    prefix = f"{record_id};".encode()
    return (prefix * (BIG // len(prefix) + 1))[:BIG]


@pytest.fixture(scope="module")
def lane_of_big_records(tmp_path_factory):
    """(lane, {record id: body}): transactions of three 100 KiB records and a
    small plain record each, over at least four files."""
    lane = str(tmp_path_factory.mktemp("deferred") / "lane")
    bodies, record_id, tx_id = {}, 1, 1
    with Journal.open(lane, **OPTIONS) as journal:
        while len(journal.files) < 4:
            for _ in range(3):
                bodies[record_id] = big_body(record_id)
                journal.append_add_tx(tx_id, record_id, bodies[record_id])
                record_id += 1
            journal.commit(tx_id, sync=True)
            bodies[record_id] = b"small %d" % record_id
            journal.append_add(record_id, bodies[record_id], sync=True)
            record_id, tx_id = record_id + 1, tx_id + 1
    return lane, bodies


def copy_of(lane: str, tmp_path) -> str:
    target = str(tmp_path / "lane")
    shutil.copytree(lane, target)
    return target


def deferred_records(lane: str) -> list[tuple[str, int, int]]:
    """(file path, offset, body length) of every big record in the lane's
    sealed files (all but the newest with data)."""
    return [record for file in big_records(lane)[:-1] for record in file]


def newest_big_record(lane: str) -> tuple[str, int, int]:
    return big_records(lane)[-1][-1]


def big_records(lane: str) -> list[list[tuple[str, int, int]]]:
    """Per data file with data, in file id order (the loader's full-check scan):
    its big records' (path, offset, body length)."""
    files, _swap, _damaged = scan_lane(lane, LoadReport())
    try:
        return [[(f.path, f.scan.offsets[i], f.scan.body_lens[i]) for i in range(f.scan.n)
                 if f.scan.body_lens[i] >= DEFER_MIN_BODY] for f in files if f.scan.n]
    finally:
        for f in files:
            f.mapped.close()


def record_id_at(path: str, offset: int) -> int:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return layout.RECORD_HEADER.unpack(handle.read(layout.RECORD_HEADER_SIZE))[6]


def flip(path: str, offset: int) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0x5A]))


def test_deferred_read_gives_what_a_full_check_gives(lane_of_big_records):
    lane, bodies = lane_of_big_records
    with Journal.read(lane) as eager, Journal.read(lane, defer_crc=True) as deferred:
        assert eager.report.crc_deferred == 0
        assert deferred.report.crc_deferred == len(deferred_records(lane)) > 0
        assert {r.record_id: bytes(r.body) for r in deferred.records()} == \
            {r.record_id: bytes(r.body) for r in eager.records()} == bodies
        assert deferred.check_deferred() == 0         # each was checked when it was read


def test_records_never_read_are_checked_by_check_deferred(lane_of_big_records):
    lane, _bodies = lane_of_big_records
    with Journal.read(lane, defer_crc=True) as snapshot:
        pending = snapshot.report.crc_deferred
        assert snapshot.check_deferred() == pending > 0
        assert snapshot.check_deferred() == 0


def test_damaged_big_body_in_sealed_file_fails_when_read_naming_file_and_offset(
        lane_of_big_records, tmp_path):
    lane = copy_of(lane_of_big_records[0], tmp_path)
    path, offset, _body_len = deferred_records(lane)[1]
    flip(path, offset + layout.RECORD_HEADER_SIZE + 5000)
    with pytest.raises(CorruptJournalError) as full_check:
        Journal.read(lane)
    assert full_check.value.path == path and full_check.value.offset == offset
    with Journal.read(lane, defer_crc=True) as snapshot:     # the load does not see it ...
        damaged = snapshot.get(record_id_at(path, offset))
        with pytest.raises(CorruptJournalError) as when_read:   # ... reading the body does
            bytes(damaged.body)
        with pytest.raises(CorruptJournalError):                # ... every time
            bytes(damaged.body)
    assert (when_read.value.path, when_read.value.offset) == (path, offset)
    assert "crc mismatch" in str(when_read.value)


def test_damage_in_a_record_never_read_fails_check_deferred(lane_of_big_records, tmp_path):
    lane = copy_of(lane_of_big_records[0], tmp_path)
    path, offset, body_len = deferred_records(lane)[-1]
    flip(path, offset + layout.RECORD_HEADER_SIZE + body_len - 1)
    with Journal.read(lane, defer_crc=True) as snapshot:
        with pytest.raises(CorruptJournalError) as error:
            snapshot.check_deferred()
    assert (error.value.path, error.value.offset) == (path, offset)


@pytest.mark.parametrize("seed", range(24))
def test_random_damage_in_sealed_records_is_always_detected(lane_of_big_records, tmp_path, seed):
    """One byte changed anywhere a sealed file's records cover (header or
    body): a deferred read that reads every body and then check_deferred must
    fail naming that file, at load or later; never a different result."""
    rng = random.Random(seed)
    lane = copy_of(lane_of_big_records[0], tmp_path)
    path, offset, body_len = rng.choice(deferred_records(lane))
    flip(path, offset + rng.randrange(layout.RECORD_HEADER_SIZE + body_len))
    with pytest.raises(CorruptJournalError) as error:
        with Journal.read(lane, defer_crc=True) as snapshot:
            for record in snapshot.records():
                bytes(record.body)
            snapshot.check_deferred()
    assert error.value.path == path


def test_torn_tail_is_end_of_data_with_deferred_checks(lane_of_big_records, tmp_path):
    lane = copy_of(lane_of_big_records[0], tmp_path)
    with Journal.open(lane, **OPTIONS) as journal:
        journal.append_add_tx(999, 10_000, big_body(10_000))
        journal.commit(999, sync=True)
    path, offset, _body_len = newest_big_record(lane)
    assert record_id_at(path, offset) == 10_000
    flip(path, offset + layout.RECORD_HEADER_SIZE + 10)       # torn: its COMMIT is lost with it
    with Journal.read(lane) as eager, Journal.read(lane, defer_crc=True) as deferred:
        assert eager.report.torn_tail is not None and deferred.report.torn_tail is not None
        assert deferred.report.torn_tail.file == eager.report.torn_tail.file == path
        assert deferred.get(10_000) is None and eager.get(10_000) is None
        assert deferred.check_deferred() == deferred.report.crc_deferred > 0


def test_files_of_small_records_are_checked_at_load(tmp_path):
    lane = str(tmp_path / "lane")
    with Journal.open(lane, **OPTIONS) as journal:
        for record_id in range(1, 4000):
            journal.append_add(record_id, b"event %d" % record_id * 50, sync=False)
    with Journal.read(lane, defer_crc=True) as snapshot:
        assert snapshot.report.files >= 2 and snapshot.report.crc_deferred == 0


def test_spark_read_of_big_events_fails_on_damage_in_a_sealed_file(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", fileSize="1m")
    for batch in range(2):                          # ~3 MB per batch: records of ~480 KB
        rows = spark.range(batch * 3000, (batch + 1) * 3000, numPartitions=1)
        sink(rows.selectExpr("id", "repeat('x', 1000) as payload"), batch)
    read = spark.read.format("sparkjournal").load(path)
    assert read.count() == 6000
    # Tasks may have landed in more than one lane (the suite's workers keep theirs open).
    sealed = [record for lane in list_lanes(path)
              for record in deferred_records(os.path.join(path, lane))]
    damaged, offset, _body_len = sealed[len(sealed) // 2]
    flip(damaged, offset + layout.RECORD_HEADER_SIZE + 3000)
    with pytest.raises(Exception, match=f"{os.path.basename(damaged)} is corrupt at offset {offset}"):
        spark.read.format("sparkjournal").load(path).collect()
