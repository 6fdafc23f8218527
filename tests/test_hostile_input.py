"""What the fuzzer (tests/fuzz/) found, each kept as a plain scenario: damaged
or unexpected bytes on disk give a sparkjournal error naming the file and what
to do, and a changed fileSize never costs a record."""
from __future__ import annotations

import os
import struct

import pytest

from sparkjournal import Journal
from sparkjournal.errors import CorruptJournalError, SparkJournalError
from sparkjournal.events.commit_log import CommitLog, CommitLogError
from sparkjournal.events.deletions import DeletionVectorError, decode_vector
from sparkjournal.events.lane_deletes import pending_deletions
from sparkjournal.events.requests import RequestError, submit
from sparkjournal.format import layout
from sparkjournal.format.codec import CODEC
from sparkjournal.journal.fileset import GENERATION_FILE, read_generation
from sparkjournal.journal.swap import CONTROL_FILE, read_control

OPTS = {"fileSize": "16k", "bufferSize": "8k", "journalType": "NIO"}


def data_files(lane: str) -> dict:
    return {n: os.path.getsize(os.path.join(lane, n)) for n in os.listdir(lane) if n.endswith(".sjd")}


def test_a_writer_opened_with_another_file_size_keeps_every_record_and_file_size(lane):
    with Journal.open(lane, **OPTS) as journal:
        for record_id in range(1, 11):
            journal.append_add(record_id, b"x" * 500)
    old_files = data_files(lane)
    with Journal.open(lane, **{**OPTS, "fileSize": "64k", "bufferSize": "16k"}) as journal:
        for record_id in range(11, 101):
            journal.append_add(record_id, b"y" * 500)
    with Journal.read(lane) as snapshot:
        assert sorted(r.record_id for r in snapshot.records()) == list(range(1, 101))
        assert snapshot.report.warnings == [] and snapshot.report.attic == []
    sizes = data_files(lane)
    assert all(sizes[name] == size for name, size in old_files.items()), (old_files, sizes)
    assert set(sizes.values()) == {16384, 65536}


def test_records_appended_after_a_torn_write_mid_block_survive_the_next_loads(lane):
    with Journal.open(lane, **OPTS) as journal:
        for record_id in range(1, 6):
            journal.append_add(record_id, b"x" * 100, sync=False)
        journal.flush()                      # one write: record 5 ends mid-block
        offset = journal._state.live[5][1]
        path = journal._paths[journal._state.live[5][0]]
    with open(path, "r+b") as handle:       # the write tore: record 5's body is damaged
        handle.seek(offset + layout.RECORD_HEADER_SIZE + 50)
        handle.write(b"\xff")
    with Journal.open(lane, **OPTS) as journal:
        assert journal.report.torn_tail.offset == offset
        journal.append_add(6, b"acknowledged after the tear")
    with Journal.read(lane) as snapshot:
        assert sorted(r.record_id for r in snapshot.records()) == [1, 2, 3, 4, 6]
        assert snapshot.report.torn_tail is None
    with Journal.open(lane, **OPTS) as journal:      # rolls: the torn file is sealed now
        for record_id in range(7, 200):
            journal.append_add(record_id, b"z" * 100, sync=False)
        assert len(journal.files) > 1
    with Journal.read(lane) as snapshot:
        assert sorted(r.record_id for r in snapshot.records()) == [1, 2, 3, 4] + list(range(6, 200))


@pytest.mark.parametrize("records", [None, [1, 2], {"x": None}, {"5": "all"}, {"5": [-1]},
                                     {"5": [1 << 32]}, {"9" * 30: None}],
                         ids=["missing", "a-list", "bad-id", "bad-rows", "negative-row",
                              "row-past-u32", "id-past-u64"])
def test_a_damaged_delete_request_is_a_request_error_naming_the_file(lane, records):
    os.makedirs(lane)
    path = submit(lane, "delete", {} if records is None else {"records": records})
    with pytest.raises(RequestError) as failure:
        pending_deletions(lane)
    assert path in str(failure.value) and "submit the delete again" in str(failure.value)


def test_a_deeply_nested_request_is_a_request_error(lane):
    os.makedirs(os.path.join(lane, "requests"))
    with open(os.path.join(lane, "requests", "1-x.json"), "w") as handle:
        handle.write("[" * 100_000 + "]" * 100_000)
    with pytest.raises(RequestError, match="not valid JSON"):
        pending_deletions(lane)


def test_a_missing_large_body_is_a_corrupt_journal_error_naming_it(lane):
    with Journal.open(lane, largeRecordSize=64, **OPTS) as journal:
        journal.append_add(1, b"L" * 100)
    body = os.path.join(lane, "large", os.listdir(os.path.join(lane, "large"))[0])
    os.remove(body)
    with Journal.read(lane) as snapshot:
        record = snapshot.get(1)
        with pytest.raises(CorruptJournalError) as failure:
            record.body
    assert body in str(failure.value) and "missing" in str(failure.value)


def test_a_large_flagged_record_with_a_short_reference_is_a_corrupt_journal_error(lane):
    with Journal.open(lane, **OPTS) as journal:
        journal.append_add(1, b"0123456789")
    path = os.path.join(lane, sorted(data_files(lane))[0])
    with open(path, "r+b") as handle:       # set the LARGE flag, with a right CRC
        raw = bytearray(handle.read())
        at = layout.FILE_HEADER_SIZE
        raw[at + 5] = layout.FLAG_LARGE
        struct.pack_into("<I", raw, at, CODEC.crc32c(bytes(raw[at + 4:at + 50])))
        handle.seek(0)
        handle.write(raw)
    with Journal.read(lane) as snapshot:
        with pytest.raises(CorruptJournalError, match="reference is 10 bytes, not 24"):
            snapshot.get(1).body


def test_a_record_after_its_transactions_prepare_fails_the_load_naming_file_and_offset(lane):
    with Journal.open(lane, **OPTS) as journal:
        journal.append_add_tx(1, 10, b"in tx")
        journal.prepare(1, b"xid")
    path = os.path.join(lane, sorted(data_files(lane))[0])
    with open(path, "r+b") as handle:       # what no writer writes, with a right CRC
        raw = bytearray(handle.read())
        file_id = struct.unpack_from("<Q", raw, 16)[0]
        end = CODEC.scan(raw, layout.FILE_HEADER_SIZE, layout.file_id32(file_id)).clean_end
        CODEC.encode_record(raw, end, layout.ADD_TX, 0, 0, layout.file_id32(file_id), 11, 1, 0, b"late")
        handle.seek(0)
        handle.write(raw)
    with pytest.raises(CorruptJournalError) as failure:
        Journal.read(lane)
    assert failure.value.path == path and failure.value.offset == end
    assert "transaction 1 is prepared" in str(failure.value)


def test_a_files_gen_of_other_bytes_reads_as_damaged_and_the_lane_still_loads(lane):
    with Journal.open(lane, **OPTS) as journal:
        journal.append_add(1, b"a")
    with open(os.path.join(lane, GENERATION_FILE), "wb") as handle:
        handle.write(b"\xca\xfe")
    assert read_generation(lane) == -1
    with Journal.read(lane) as snapshot:
        assert len(snapshot) == 1


@pytest.mark.parametrize("raw, detail", [
    (b"1", "the entry is not a json object"),
    (b'{"format": 1, "query": "q", "batch": 1, "committed_at_ms": 1, "txs": [7]}',
     "each of txs must be an object"),
    (b'{"format": 1, "query": "q", "batch": 1e999, "committed_at_ms": 1, "txs": []}',
     "the number 1e999, too large"),
    (b"[" * 100_000, "more than 32 deep"),
], ids=["not-an-object", "bad-txs", "infinite-batch", "deep-nesting"])
def test_a_damaged_commit_log_entry_is_a_commit_log_error(tmp_path, raw, detail):
    os.makedirs(tmp_path / "q")
    (tmp_path / "q" / f"{1:020d}.json").write_bytes(raw)
    with pytest.raises(CommitLogError) as failure:
        CommitLog(str(tmp_path)).decision("q", 1)
    assert detail in str(failure.value).lower() and "restore it" in str(failure.value).lower()


def test_a_deeply_nested_control_file_is_a_corrupt_journal_error(lane):
    os.makedirs(lane)
    with open(os.path.join(lane, CONTROL_FILE), "w") as handle:
        handle.write("[" * 100_000)
    with pytest.raises(CorruptJournalError, match="compaction control file is damaged"):
        read_control(lane)


def test_a_damaged_deletion_vector_is_a_sparkjournal_error():
    with pytest.raises(SparkJournalError):
        decode_vector(b"not a vector at all, long enough")
    assert issubclass(DeletionVectorError, ValueError)
