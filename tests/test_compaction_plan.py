"""Compaction's plan and copy in C (native/sj_compact.c, sj_copy_records) give
what the Python path gives on the same files: the loader's replay plus the rule
of maintenance/compaction_plan.py, and the Python codec's re-encoding. Lanes are
real files, written through the journal or record by record with the codec
(for what no writer writes: broken counts, outcomes of unknown transactions,
records out of order, stale and torn bytes)."""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from array import array

import pytest

from sparkjournal import CorruptJournalError, Journal
from sparkjournal.format import codec_python, layout
from sparkjournal.journal.datafile import FileHeader
from sparkjournal.journal.loader import scan_lane
from sparkjournal.journal.records import LoadReport
from sparkjournal.maintenance import compaction_plan
from sparkjournal.maintenance.compaction_plan import plan_native, plan_python

try:
    from sparkjournal.format import codec_native
except ImportError:
    codec_native = None

pytestmark = pytest.mark.skipif(codec_native is None or compaction_plan.lib is None,
                                reason="C core not built: run `python native/build_native.py`")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FILE_SIZE = 64 << 10
ADD, UPDATE, DELETE, ADD_TX, UPDATE_TX, DELETE_TX, PREPARE, COMMIT, ROLLBACK = range(1, 10)


def write_lane(lane: str, files: list, sync_window: int = 0) -> list:
    """Writes each list of records (type, record id, tx id, count, body[, file id
    override]) as data file n + 1, each rolled into from the one before (its
    header names it and where its own records end, as a writer's roll does);
    returns the files' paths."""
    os.makedirs(lane, exist_ok=True)
    paths = []
    previous_end = 0
    for number, records in enumerate(files, 1):
        buf = bytearray(FILE_SIZE)
        buf[:layout.FILE_HEADER_SIZE] = FileHeader(
            number, FILE_SIZE, 4096, sync_window, prev_file_id=number - 1,
            prev_end=previous_end).encode()
        pos = own_end = layout.FILE_HEADER_SIZE
        for rtype, record_id, tx_id, count, body, *fid in records:
            pos = codec_python.encode_record(buf, pos, rtype, 0, 7, fid[0] if fid else number,
                                             record_id, tx_id, count, body)
            own_end = own_end if fid else pos
        previous_end = own_end
        paths.append(os.path.join(lane, f"data-{number}.sjd"))
        with open(paths[-1], "wb") as handle:
            handle.write(buf)
    return paths


def both_plans(lane: str):
    files, _pending, _damaged = scan_lane(lane, LoadReport())
    native, python = plan_native(files), plan_python(files)
    return native, python


def assert_same_plan(lane: str):
    native, python = both_plans(lane)
    assert native.out_types == python.out_types
    assert (native.max_record_id, native.max_tx_id) == (python.max_record_id, python.max_tx_id)
    return native


def random_records(rng: random.Random) -> list:
    """A lane's records over 1-4 files: plain records, transactions committed,
    rolled back, left open or prepared, COMMITs with wrong counts, outcomes of
    unknown transactions, tx ids used again after their outcome."""
    files, current = [[]], {}          # open tx -> [prepared, records in the current file]
    for _ in range(rng.randrange(1, 120)):
        if rng.random() < 0.08:
            files.append([])
            for state in current.values():
                state[1] = 0
        kind = rng.random()
        record_id, tx_id = rng.randrange(1, 25), rng.randrange(1, 8)
        body = bytes([record_id]) * rng.randrange(0, 60)
        if kind < 0.4:
            rtype = rng.choice((ADD, UPDATE, DELETE))
            files[-1].append((rtype, record_id, 0, 0, b"" if rtype == DELETE else body))
            continue
        state = current.setdefault(tx_id, [False, 0])
        if kind < 0.7 and not state[0]:
            rtype = rng.choice((ADD_TX, UPDATE_TX, DELETE_TX))
            files[-1].append((rtype, record_id, tx_id, 0, b"" if rtype == DELETE_TX else body))
            state[1] += 1
        elif kind < 0.78 and not state[0]:
            files[-1].append((PREPARE, 0, tx_id, state[1], b"xid"))
            state[0] = True
        else:
            count = state[1] if rng.random() < 0.8 else rng.randrange(0, 4)
            files[-1].append((rng.choice((COMMIT, COMMIT, ROLLBACK)), 0, tx_id, count, b""))
            del current[tx_id]
    return files


def test_native_plan_agrees_with_the_loaders_replay_on_random_lanes(tmp_path):
    rng = random.Random(5)
    kept_types = set()
    for number in range(250):
        lane = str(tmp_path / f"lane-{number}")
        write_lane(lane, random_records(rng))
        plan = assert_same_plan(lane)
        kept_types |= set(b"".join(plan.out_types))
    # the lanes reached every verdict: dropped, live, open tx records, prepared
    assert kept_types == {0, ADD, ADD_TX, UPDATE_TX, DELETE_TX, PREPARE}


def test_native_plan_agrees_on_stale_records_and_a_torn_tail(tmp_path):
    lane = str(tmp_path / "lane")
    paths = write_lane(lane, [
        [(ADD, 1, 0, 0, b"a"), (ADD, 2, 0, 0, b"b"), (ADD, 9, 0, 0, b"stale", 77)],
        [(ADD_TX, 3, 4, 0, b"c"), (DELETE, 1, 0, 0, b""), (COMMIT, 0, 4, 1, b""),
         (ADD, 5, 0, 0, b"torn"), (ADD, 6, 0, 0, b"after")]], sync_window=FILE_SIZE)
    with open(paths[1], "r+b") as handle:          # the newest file's record 5: torn
        handle.seek(layout.FILE_HEADER_SIZE + 48 + 40 + 40 + 41)   # inside its body
        handle.write(b"\xff")
    native = assert_same_plan(lane)
    assert native.out_types == [bytes([0, ADD]), bytes([ADD, 0, 0])]     # 9 is stale, 5 and 6 torn


def test_damage_fails_the_compaction_before_any_plan(tmp_path):
    lane = str(tmp_path / "lane")
    paths = write_lane(lane, [[(ADD, 1, 0, 0, b"a" * 100), (ADD, 2, 0, 0, b"b")],
                              [(ADD, 3, 0, 0, b"c")]])
    with open(paths[0], "r+b") as handle:          # a sealed file's first record
        handle.seek(layout.FILE_HEADER_SIZE + 50)
        handle.write(b"\xff")
    for codec in ("native", "python"):
        result = compact_in_child(lane, codec)
        assert result["error"].startswith("CorruptJournalError") and "crc mismatch" in result["error"]


@pytest.mark.parametrize("records, what", [
    ([(PREPARE, 0, 4, 0, b"x"), (ADD_TX, 3, 4, 0, b"c")],
     "transaction 4 is prepared: it takes no more records"),
    ([(ADD_TX, 3, 4, 0, b"c"), (PREPARE, 0, 4, 1, b"x"), (PREPARE, 0, 4, 1, b"x")],
     "transaction 4 is already prepared"),
])
def test_records_out_of_order_fail_both_paths_alike(tmp_path, records, what):
    lane = str(tmp_path / "lane")
    write_lane(lane, [[(ADD, 1, 0, 0, b"a")] + records, [(ADD, 2, 0, 0, b"b")]])
    files, _pending, _damaged = scan_lane(lane, LoadReport())
    errors = []
    for path in (plan_native, plan_python):
        with pytest.raises(CorruptJournalError) as caught:
            path(files)
        errors.append(str(caught.value))
    assert errors[0] == errors[1] and what in errors[0] and "data-1.sjd" in errors[0]


def test_copy_records_agrees_with_the_python_codec(tmp_path):
    rng = random.Random(3)
    source, offsets, pos = bytearray(FILE_SIZE), array("Q"), 0
    for number in range(60):
        offsets.append(pos)
        pos = codec_python.encode_record(source, pos, rng.randrange(1, 10), rng.randrange(2),
                                         rng.randrange(9), 0xAB, number, rng.randrange(5), 0,
                                         os.urandom(rng.randrange(0, 300)))
    index = array("I", sorted(rng.sample(range(60), 30)))
    types = bytes(rng.choice((ADD, ADD_TX, DELETE_TX, PREPARE)) for _ in index)
    for counts in (None, array("I", range(30))):
        outputs = []
        for codec in (codec_native, codec_python):
            out = bytearray(b"\xee" * FILE_SIZE)
            end = codec.copy_records(out, 8, 0xC0FFEE, source, offsets, index, types, counts)
            outputs.append((end, bytes(out)))
        assert outputs[0] == outputs[1]
        scan = codec_python.scan(outputs[0][1][:outputs[0][0]], 8, 0xC0FFEE)
        assert scan.n == 30 and scan.types.tolist() == list(types)
    for codec in (codec_native, codec_python):
        with pytest.raises(ValueError, match="outside the source"):
            codec.copy_records(bytearray(FILE_SIZE), 0, 1, source[:100], offsets, index, types)
        with pytest.raises(ValueError, match="do not fit"):
            codec.copy_records(bytearray(200), 0, 1, source, offsets, index, types)


CHILD = """
import json, sys
from sparkjournal.maintenance.compactor import compact_lane
from sparkjournal.format.codec import CODEC
try:
    report = compact_lane(sys.argv[1], force=True, fileSize="64k", bufferSize="16k", minFiles=2)
    print(json.dumps({"codec": CODEC.CODEC_NAME, "kept": report.records_kept,
                      "dropped": report.records_dropped, "files": report.new_files,
                      "reason": report.reason}))
except Exception as error:
    print(json.dumps({"codec": CODEC.CODEC_NAME, "error": f"{type(error).__name__}: {error}"}))
"""


def compact_in_child(lane: str, codec: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, lane], capture_output=True, text=True,
                         env={**os.environ, "SPARKJOURNAL_CODEC": codec, "PYTHONPATH": REPO},
                         timeout=300, check=True).stdout
    result = json.loads(out.strip().splitlines()[-1])
    assert result["codec"] == codec
    return result


def test_compaction_through_either_path_keeps_the_same_records(tmp_path):
    options = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}
    template = str(tmp_path / "template")
    with Journal.open(template, **options) as journal:
        for record_id in range(1, 1000):
            journal.append_add(record_id, os.urandom(100 + record_id % 300), sync=False)
        for record_id in range(1, 1000):
            if record_id % 3:
                journal.append_delete(record_id, sync=False)
        journal.append_add_tx(7, 1000, b"prepared body")
        journal.prepare(7, xid=b"x")
        journal.append_add_tx(8, 1001, b"committed body")
        journal.commit(8)
        for record_id in range(2000, 2100):
            journal.append_add(record_id, os.urandom(200), sync=False)
    lanes, results, contents = {}, {}, {}
    for codec in ("native", "python"):
        lanes[codec] = str(tmp_path / codec)
        shutil.copytree(template, lanes[codec])
        results[codec] = compact_in_child(lanes[codec], codec)
        with Journal.read(lanes[codec], **options) as snapshot:
            contents[codec] = ({r.record_id: bytes(r.body) for r in snapshot.records()},
                               [(p.tx_id, p.record_ids) for p in snapshot.prepared()])
    assert results["native"] == {**results["python"], "codec": "native"}
    assert results["native"]["files"] >= 1, results
    assert contents["native"] == contents["python"]
    assert contents["native"][1] == [(7, [1000])]
