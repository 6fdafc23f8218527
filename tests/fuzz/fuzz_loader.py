"""Fuzz target: the loader on a whole mutated lane (lane_image.py).

The options byte of the image: bit 0 recovery mode, bit 1 no CRC checks
(checksum=false), bit 2 open as the lane's writer (Journal.open: moves bad
files to the attic, zeroes a torn tail, rolls back unfinished transactions)
instead of a read-only snapshot (Journal.read).

Properties of an accepted lane ("never wrong data"): every live record and
every record of a prepared transaction is a whole record of its file with a
right CRC (when CRCs are checked), of a type that carries a body, with the
record id it is listed under; its body reads or fails with a sparkjournal
error; the lane's deletion vectors and pending delete requests decode or fail
with one. After a writer opened the lane and appended one record (synced:
acknowledged), a read-only load accepts the lane and sees the same live
records, that one included.
"""
from __future__ import annotations

import struct

from tests.fuzz.common import allowed, atheris, layout, record_crc_ok, run, temp_dir
from tests.fuzz.lane_image import write_lane

with atheris.instrument_imports(include=["sparkjournal"]):
    from sparkjournal.events.lane_deletes import lane_deletions, pending_deletions
    from sparkjournal.journal.journal import Journal

ALLOWED = allowed()
BODY_TYPES = (layout.ADD, layout.UPDATE, layout.ADD_TX, layout.UPDATE_TX)
WRITER_OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2, "journalType": "NIO"}


def check_record(snapshot, record, verify_crc: bool) -> None:
    view = snapshot._map(record.file_id).view
    offset = record.offset
    head = struct.unpack_from("<IBBHIIQ", view, offset)
    assert head[1] in BODY_TYPES, f"record {record.record_id}: type {head[1]} has no body"
    assert head[6] == record.record_id, f"record {record.record_id} listed at a record of id {head[6]}"
    assert head[5] == record.body_len and head[3] == record.user_type, record
    if verify_crc:
        assert record_crc_ok(view, offset, layout.file_id32(record.file_id)), \
            f"record {record.record_id} at {record.file_id}:{offset} has a wrong CRC"
    try:
        body = record.body
    except ALLOWED:
        return
    assert record.large or len(body) == record.body_len


def check_snapshot(snapshot, lane: str, verify_crc: bool) -> set:
    live = set()
    for record in snapshot.records():
        check_record(snapshot, record, verify_crc)
        live.add(record.record_id)
    for tx in snapshot.prepared():
        for record in snapshot.prepared_records(tx.tx_id):
            check_record(snapshot, record, verify_crc)
    try:
        lane_deletions(snapshot, pending_deletions(lane))
    except ALLOWED:
        pass
    return live


def test_one_input(data: bytes) -> None:
    if not data:
        return
    options = data[0]
    recover, verify_crc, writer = bool(options & 1), not options & 2, bool(options & 4)
    with temp_dir("sj-fuzz-lane-") as lane:
        write_lane(data, lane)
        if not writer:
            try:
                snapshot = Journal.read(lane, recover=recover, checksum=verify_crc)
            except ALLOWED:
                return
            with snapshot:
                check_snapshot(snapshot, lane, verify_crc)
            return
        try:
            journal = Journal.open(lane, recover=recover, checksum=verify_crc, **WRITER_OPTIONS)
        except ALLOWED:
            return
        try:
            live = check_snapshot(journal, lane, verify_crc)
            record_id = journal.next_record_id()
            if record_id < 1 << 64:          # a damaged watermark may have used up the ids
                journal.append_add(record_id, b"appended by the fuzzer", sync=True)
                live.add(record_id)
        finally:
            journal.close()
        with Journal.read(lane, checksum=verify_crc) as again:
            assert check_snapshot(again, lane, verify_crc) == live, "live records changed on reload"


if __name__ == "__main__":
    run(test_one_input)
