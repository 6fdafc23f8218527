"""The JVM journal layer (jvm/src/main/java/io/sparkjournal/journal) loads a
lane read only exactly as ``Journal.read(lane, defer_crc=False, ...)`` does.

Lanes are written by the project's own Journal (several writer sessions, so
files roll, are reclaimed and reused; updates, deletes, transactions committed,
rolled back, left prepared and left open; large records; compactions, one cut
between its control file and its swap), then copies are damaged in the ways
FORMAT.md names. For each, the Python snapshot (records in order with their
bodies, prepared transactions, open transactions, watermarks, the files loaded
and the LoadReport) is compared with what ``io.sparkjournal.journal.LaneDump``
prints, which must be identical; or both must fail with the same kind of error
naming the same file and offset (and, unless a case says otherwise, the same
message). One JVM per case.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import struct
import subprocess

import pytest

from sparkjournal import Journal
from sparkjournal.config import load_config
from sparkjournal.errors import SparkJournalError
from sparkjournal.format import codec_python, layout
from sparkjournal.journal.datafile import COMPACTING_SUFFIX, read_header
from sparkjournal.journal.free_by_header import free_ids
from sparkjournal.journal.loader import load
from sparkjournal.journal.swap import CONTROL_FILE, read_control
from sparkjournal.maintenance.compactor import compact_lane

from lane_surgery import flip, patch, read_at, scan_lane
from test_jvm_format_agreement import OPTIONS, jvm, with_version  # noqa: F401  (jvm: fixture)

DUMP = "io.sparkjournal.journal.LaneDump"
HEX_UP_TO = 64
JAVA_ERRORS = {"CorruptJournalException": "CorruptJournalError",
               "FormatVersionException": "FormatVersionError",
               "PathOutsideException": "PathOutsideError",
               "JournalException": "SparkJournalError"}
SEEDS = range(20)


# --- writing lanes ---------------------------------------------------------------------------
def write_lane(lane: str, seed: int) -> None:
    """Three to five writer sessions of random records and transactions. Most
    records are deleted between sessions so files are reclaimed and reused;
    prepared transactions outlive their session (a later one may end them);
    the last session leaves prepared and open transactions behind."""
    rng = random.Random(seed)
    live: set[int] = set()
    next_id, next_tx = 1, 1
    prepared: dict[int, list] = {}          # tx id -> [(op, record id)]
    sessions = rng.randint(3, 5)
    for session in range(sessions):
        last = session == sessions - 1
        with Journal.open(lane, **OPTIONS) as journal:
            for tx_id in list(prepared):
                if rng.random() < 0.5:
                    if rng.random() < 0.6:
                        journal.commit(tx_id, sync=False)
                        apply(live, prepared[tx_id])
                    else:
                        journal.rollback(tx_id, sync=False)
                    del prepared[tx_id]
            for _ in range(rng.randint(40, 120)):
                roll = rng.random()
                body = rng.randbytes(rng.choice([0, 1, 7, 8, 9, 40, 64, 65, 100, 500, 1500,
                                                 2500, 3100, 5000, 9000]))
                if roll < 0.4 or not live:
                    journal.append_add(next_id, body, user_type=rng.randrange(65536), sync=False)
                    live.add(next_id)
                    next_id += 1
                elif roll < 0.5:
                    journal.append_update(rng.choice(sorted(live)), body,
                                          user_type=rng.randrange(4), sync=False)
                elif roll < 0.68:
                    record_id = rng.choice(sorted(live))
                    journal.append_delete(record_id, sync=False)
                    live.discard(record_id)
                else:
                    tx_id, next_tx = next_tx, next_tx + 1
                    ops = []
                    for _ in range(rng.randint(1, 3)):
                        journal.append_add_tx(tx_id, next_id, body, user_type=5)
                        ops.append(("put", next_id))
                        next_id += 1
                    if live and rng.random() < 0.4:
                        record_id = rng.choice(sorted(live))
                        journal.append_update_tx(tx_id, record_id, body[:50], user_type=6)
                        ops.append(("put", record_id))
                    if live and rng.random() < 0.3:
                        record_id = rng.choice(sorted(live))
                        journal.append_delete_tx(tx_id, record_id)
                        ops.append(("delete", record_id))
                    outcome = rng.random()
                    if outcome < 0.25:
                        journal.prepare(tx_id, xid=rng.randbytes(rng.randint(0, 30)))
                        if outcome < 0.12:
                            prepared[tx_id] = ops          # left prepared, for now
                            continue
                    if outcome < 0.7:
                        journal.commit(tx_id, sync=False)
                        apply(live, ops)
                    elif outcome < 0.93 or not last:
                        journal.rollback(tx_id, sync=False)
                    # else: left open (no PREPARE, no outcome) by the last session
            if not last and session % 2 == 0:
                for record_id in rng.sample(sorted(live), k=len(live) * 9 // 10):
                    journal.append_delete(record_id, sync=False)
                    live.discard(record_id)
            journal.flush()


def apply(live: set, ops: list) -> None:
    for op, record_id in ops:
        (live.add if op == "put" else live.discard)(record_id)


def defer_swap(lane: str) -> None:
    """A compaction whose swap waits for a reader: its control file and its
    .cmp files stay, as if the compactor had been cut between the two."""
    with Journal.read(lane):
        report = compact_lane(lane, force=True, swap_wait=0.01, **OPTIONS)
    assert not report.compacted or report.swap_deferred


def rename_first_cmp(lane: str) -> None:
    """The swap's first step done by hand (os.replace of one .cmp over its name)."""
    control = read_control(lane)
    if control is not None:
        name = sorted(n for n, _id in control.new)[0]
        os.replace(os.path.join(lane, name + COMPACTING_SUFFIX), os.path.join(lane, name))


def make_lane(lane: str, seed: int) -> str:
    """A lane of ``write_lane(seed)``; by seed, compacted (then written on),
    compacted whole, or with a compaction swap pending or half done."""
    write_lane(lane, seed)
    kind = seed % 5
    if kind in (1, 4):
        compact_lane(lane, force=True, **OPTIONS)
        if kind == 1:
            with Journal.open(lane, **OPTIONS) as journal:
                for record_id in range(100_000, 100_000 + 20):
                    journal.append_add(record_id, bytes([record_id % 251]) * (record_id % 700),
                                       sync=False)
    elif kind in (2, 3):
        defer_swap(lane)
        if kind == 3:
            rename_first_cmp(lane)
    return lane


# --- both sides -------------------------------------------------------------------------------
def record_view(record) -> dict:
    body = bytes(record.body)
    out = {"id": record.record_id, "user_type": record.user_type, "body_len": record.body_len,
           "file_id": record.file_id, "offset": record.offset, "large": record.large,
           "size": len(body), "crc32c": codec_python.crc32c(body)}
    if len(body) <= HEX_UP_TO:
        out["hex"] = body.hex()
    return out


def python_view(lane: str, recover: bool = False, checksum: bool = True) -> dict:
    """What Journal.read sees, in LaneDump's form; or the error it raises."""
    try:
        with Journal.read(lane, checksum=checksum, recover=recover) as snap:
            out = {"records": [record_view(r) for r in snap.records()]}
            out["prepared"] = [{"tx_id": p.tx_id, "xid": p.xid.hex(), "record_ids": p.record_ids,
                                "records": [record_view(r) for r in snap.prepared_records(p.tx_id)]}
                               for p in snap.prepared()]
            out["open_transactions"] = [{"tx_id": tx_id, "record_ids": ids}
                                        for tx_id, ids in snap.open_transactions().items()]
            out["max_record_id"] = snap.max_record_id
            out["max_tx_id"] = snap._state.max_tx_id
            out["generation"] = snap._generation[0]
            report = dataclasses.asdict(snap.report)
        control = read_control(lane)
        out["pending_swap"] = None if control is None else {
            "generation": control.generation, "old": [list(p) for p in control.old],
            "new": [list(p) for p in control.new]}
        loaded = load(lane, verify_crc=checksum, writable=False, recover=recover)
        out["files"] = [{"path": f.path, "file_id": f.file_id, "end": f.end,
                         "records": f.n_data, "torn_end": f.torn_end} for f in loaded.files]
        for f in loaded.files:
            f.mapped.close()
        out["report"] = report
        return out
    except SparkJournalError as error:
        return {"error": type(error).__name__, "message": str(error),
                "path": getattr(error, "path", None), "offset": getattr(error, "offset", None)}


def java_view(jvm, lane: str, recover: bool = False, checksum: bool = True) -> dict:
    java, classpath = jvm
    args = [java, "-cp", classpath, DUMP, lane] + (["--recover"] if recover else []) + \
        ([] if checksum else ["--no-crc"])
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode in (0, 2), f"LaneDump failed ({done.returncode}): {done.stderr}"
    out = json.loads(done.stdout)
    assert ("error" in out) == (done.returncode == 2), done.stdout[:500]
    if "error" in out:
        out["error"] = JAVA_ERRORS.get(out["error"], "Java's " + out["error"])
    return out


def assert_agree(jvm, lane: str, recover: bool = False, checksum: bool = True,
                 same_message: bool = True) -> dict:
    """Runs both; requires the same snapshot, or the same error. Returns Python's."""
    want = python_view(lane, recover, checksum)
    got = java_view(jvm, lane, recover, checksum)
    where = f"{lane} (recover={recover}, checksum={checksum})"
    if "error" in want or "error" in got:
        assert "error" in got, f"{where}: Python raised {want['message']}; Java read the lane"
        assert "error" in want, f"{where}: Java failed ({got['message']}); Python read the lane"
        assert got["error"] == want["error"], f"{where}: {got} vs {want}"
        assert got.get("path") == want["path"], f"{where}: {got} vs {want}"
        if want["error"] == "CorruptJournalError":
            assert got["offset"] == want["offset"], f"{where}: {got} vs {want}"
        if same_message:
            assert got["message"] == want["message"], where
        return want
    for key in want:
        assert got.get(key) == want[key], f"{where}: {key} differs:\nJava   {got.get(key)}" \
                                          f"\nPython {want[key]}"
    assert set(got) == set(want)
    return want


# --- fixtures ---------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def seeded_lanes(tmp_path_factory) -> list[str]:
    root = tmp_path_factory.mktemp("jvm-journal")
    return [make_lane(str(root / f"lane-{seed}"), seed) for seed in SEEDS]


@pytest.fixture
def copy_of(seeded_lanes, tmp_path):
    """A fresh copy of seeded lane ``seed`` to damage."""
    def copy(seed: int) -> str:
        target = str(tmp_path / f"copy-{seed}")
        shutil.copytree(seeded_lanes[seed], target)
        return target
    return copy


def with_data(lane: str) -> list:
    return scan_lane(lane)


def live_large(lane: str) -> list:
    """(record id, body path) of the live large records, in snapshot order."""
    out = []
    with Journal.read(lane) as snap:
        for record in snap.records():
            if record.large:
                ref = read_at(snap._paths[record.file_id], record.offset + 40, 24)
                large_id = int.from_bytes(ref[:8], "little")
                out.append((record.record_id, snap.large.path(large_id)))
    return out


# --- lanes as written -------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_a_lane_as_written_reads_alike_in_java_and_python(jvm, seeded_lanes, seed):
    want = assert_agree(jvm, seeded_lanes[seed], checksum=seed % 3 != 0)
    assert want["records"], "an empty lane proves little"


def test_the_seeded_lanes_hold_what_the_agreement_is_about(seeded_lanes):
    views = [python_view(lane) for lane in seeded_lanes]
    assert all("error" not in v for v in views)
    records = [r for v in views for r in v["records"]]
    assert sum(r["large"] for r in records) >= 10
    assert sum(r["user_type"] == 5 for r in records) >= 10          # committed transactions
    assert sum(len(v["prepared"]) for v in views) >= 5
    assert sum(len(v["open_transactions"]) for v in views) >= 1
    assert sum(v["pending_swap"] is not None for v in views) >= 4
    assert any(v["pending_swap"] is not None and any(f["path"].endswith(".cmp") for f in v["files"])
               and not all(f["path"].endswith(".cmp") for f in v["files"]) for v in views)
    assert sum(len({f["path"] for f in v["files"]}) for v in views) > 60
    assert max(r["file_id"] for r in records) > 10, "files were not reused"


# --- where data ends --------------------------------------------------------------------------
def test_torn_tail_is_end_of_data_in_both(jvm, copy_of):
    torn = 0
    for seed in (0, 5, 6, 10):
        lane = copy_of(seed)
        newest = with_data(lane)[-1]
        records = newest.records
        if len(records) < 3:
            continue
        flip(newest.path, records[-2].offset + 17)      # a record id byte: its CRC fails
        want = assert_agree(jvm, lane)
        assert want["report"]["torn_tail"]["records_dropped"] == 1
        flip(newest.path, records[-1].offset + 17)      # nothing valid after: end of data
        want = assert_agree(jvm, lane)
        torn += want["report"]["torn_tail"] == {"file": newest.path,
                                               "offset": records[-2].offset,
                                               "records_dropped": 0, "bytes_dropped": 0}
    assert torn >= 2


def test_stale_bytes_naming_the_file_past_its_data_are_end_of_data_in_both(jvm, copy_of):
    """FORMAT.md: only a header its writer could have written is a torn record
    of the file; a stale body's bytes that hold the file id at a header's place
    end the data cleanly, in a sealed file and in the newest alike."""
    planted = 0
    for seed in (0, 5, 6, 10):
        lane = copy_of(seed)
        before = assert_agree(jvm, lane)
        for data in with_data(lane):
            end = data.records[-1].offset + data.records[-1].size
            if end + layout.RECORD_HEADER_SIZE <= os.path.getsize(data.path):
                stale = bytearray(layout.RECORD_HEADER_SIZE)
                struct.pack_into("<I", stale, 0, 43)                 # type 0 at byte 4
                struct.pack_into("<I", stale, 8, layout.file_id32(data.file_id))
                patch(data.path, end, bytes(stale))
                planted += 1
        after = assert_agree(jvm, lane)
        assert after["records"] == before["records"]
        assert after["report"]["torn_tail"] == before["report"]["torn_tail"]
    assert planted >= 4


def test_records_planted_in_a_file_free_by_its_header_are_skipped_in_both(jvm, copy_of):
    """FORMAT.md's free by header: a pool file that is not the lowest-id file
    naming no previous file is taken as empty unscanned, by both loaders."""
    planted = 0
    for seed in SEEDS:
        lane = copy_of(seed)
        loaded = load(lane, writable=False)
        for f in loaded.files:
            f.mapped.close()
        free = sorted(free_ids(f.header for f in loaded.files))
        if not free:
            continue
        before = assert_agree(jvm, lane)
        target = next(f for f in loaded.files if f.file_id == free[-1])
        block = bytearray(layout.record_size(16))
        codec_python.encode_record(block, 0, layout.ADD, 0, 0, layout.file_id32(target.file_id),
                                   10**9, 0, 0, b"planted-record!!")
        patch(target.path, layout.FILE_HEADER_SIZE, bytes(block))
        assert assert_agree(jvm, lane)["records"] == before["records"]
        planted += 1
        if planted == 3:
            break
    assert planted >= 3, "the seeded lanes hold too few files free by their headers"


def test_records_past_the_sync_window_are_corruption_in_both(jvm, copy_of):
    lane = copy_of(0)
    newest = with_data(lane)[-1]
    flip(newest.path, newest.records[0].offset + 17)
    window = load_config(OPTIONS).sync_window
    past = newest.records[-1].offset + newest.records[-1].size - newest.records[0].offset > window
    want = assert_agree(jvm, lane)
    assert ("error" in want) == past


def test_a_flipped_byte_in_an_older_file_is_corruption_in_both(jvm, copy_of):
    failed = 0
    for seed in (0, 2, 7, 11, 13):
        lane = copy_of(seed)
        files = with_data(lane)
        if len(files) < 2:
            continue
        rng = random.Random(seed)
        older = files[rng.randrange(len(files) - 1)]
        record = older.records[len(older.records) // 2]
        flip(older.path, record.offset + rng.randrange(4, record.size))
        want = assert_agree(jvm, lane)
        failed += want.get("error") == "CorruptJournalError" and want["path"] == older.path
        # the same, in recovery mode: the same file, offset and lost records and transactions
        want = assert_agree(jvm, lane, recover=True)
        if "error" not in want:
            assert [r["file"] for r in want["report"]["recoveries"]] == [older.path]
    assert failed >= 3


def test_recovery_reports_the_same_losses_in_both(jvm, copy_of):
    lost = 0
    for seed in (1, 3, 4, 8, 9, 12):
        lane = copy_of(seed)
        files = with_data(lane)
        if len(files) < 3:
            continue
        for damaged in (files[0], files[len(files) // 2]):
            flip(damaged.path, damaged.records[0].offset + 4)        # its type byte
        want = assert_agree(jvm, lane, recover=True)
        assert "error" not in want
        lost += sum(len(r["lost_record_ids"]) + len(r["lost_tx_ids"])
                    for r in want["report"]["recoveries"])
        assert_agree(jvm, lane, recover=True, checksum=False)
    assert lost > 0


def test_data_ending_before_the_successors_record_of_it_is_corruption_in_both(jvm, copy_of):
    checked = 0
    for seed in range(1, 21):
        lane = copy_of(seed)
        files = with_data(lane)
        older = next((f for f in files[:-1] if not read_header(f.path).sealed_end), None)
        if older is None:
            continue                                      # every older file written by compaction
        last = older.records[-1]
        patch(older.path, last.offset, bytes(last.size))     # a sealed file's last record gone
        want = assert_agree(jvm, lane)
        assert want["error"] == "CorruptJournalError"
        assert_agree(jvm, lane, recover=True)
        checked += 1
        if checked == 2:
            break
    assert checked == 2


def test_damage_in_a_file_written_whole_by_compaction_is_corruption_in_both(jvm, copy_of):
    checked = 0
    for seed in (1, 4, 9, 14, 2):
        lane = copy_of(seed)
        sealed = [f for f in with_data(lane) if read_header(f.path).sealed_end]
        if not sealed:
            continue
        last = sealed[-1].records[-1]
        patch(sealed[-1].path, last.offset + 8, b"\xff\xff\xff\xff")  # its file id field
        want = assert_agree(jvm, lane)
        assert "written whole" in want["message"]
        assert_agree(jvm, lane, recover=True)
        checked += 1
    assert checked >= 2


def test_without_checksums_a_flipped_body_byte_is_read_alike_in_both(jvm, copy_of):
    lane = copy_of(7)
    files = with_data(lane)
    record = next(r for f in files[:-1] for r in f.records if r.size > 200 and r.rtype <= 2)
    path = next(f.path for f in files if record in f.records)
    flip(path, record.offset + 100)
    assert assert_agree(jvm, lane, checksum=False)["records"]
    assert assert_agree(jvm, lane)["error"] == "CorruptJournalError"


# --- transactions -------------------------------------------------------------------------------
def test_a_commit_whose_count_does_not_match_breaks_its_transaction_in_both(jvm, copy_of):
    broken = 0
    for seed in (0, 3, 6):
        lane = copy_of(seed)
        for f in with_data(lane):
            commits = [r for r in f.records if r.rtype == layout.COMMIT]
            if commits:
                at = commits[-1].offset
                patch(f.path, at + 32, (7).to_bytes(4, "little"))
                reseal(f.path, at)
                want = assert_agree(jvm, lane)
                broken += bool(want.get("report", {}).get("broken_tx_ids"))
                break
    assert broken >= 2


def test_a_second_prepare_is_out_of_order_in_both(jvm, copy_of):
    done = 0
    for seed in SEEDS:
        lane = copy_of(seed)
        for f in with_data(lane):
            prepares = {r.tx_id for r in f.records if r.rtype == layout.PREPARE}
            commit = next((r for r in f.records
                           if r.rtype == layout.COMMIT and r.tx_id in prepares), None)
            if commit is not None:
                patch(f.path, commit.offset + 4, bytes([layout.PREPARE]))
                reseal(f.path, commit.offset)
                want = assert_agree(jvm, lane)
                assert "out of order" in want["message"], want
                done += 1
                break
        if done >= 2:
            break
    assert done >= 1


def reseal(path: str, offset: int) -> None:
    """The record at ``offset`` gets the CRC of its (changed) bytes."""
    body_len = int.from_bytes(read_at(path, offset + 12, 4), "little")
    crc = codec_python.crc32c(read_at(path, offset + 4, 36 + body_len))
    patch(path, offset, crc.to_bytes(4, "little"))


# --- large bodies -------------------------------------------------------------------------------
def test_a_truncated_or_missing_large_body_fails_reading_in_both(jvm, copy_of):
    lane = copy_of(0)
    large = live_large(lane)
    assert len(large) >= 2
    (_first, first_path), (_second, second_path) = large[0], large[-1]
    body = open(first_path, "rb").read()
    with open(first_path, "r+b") as handle:
        handle.truncate(len(body) - 1)
    want = assert_agree(jvm, lane)
    assert want["path"] == first_path and "large body is" in want["message"]
    os.unlink(first_path)
    want = assert_agree(jvm, lane)
    assert want["path"] == first_path and "missing" in want["message"]
    with open(first_path, "wb") as handle:
        handle.write(body)
    flip(second_path, len(body) // 2 % os.path.getsize(second_path))
    want = assert_agree(jvm, lane)
    assert want["path"] == second_path and "checksum mismatch" in want["message"]
    assert "error" not in assert_agree(jvm, lane, checksum=False)


def test_a_large_folder_leading_outside_the_lane_is_refused_in_both(jvm, copy_of, tmp_path):
    lane = copy_of(0)
    outside = tmp_path / "elsewhere"
    shutil.move(os.path.join(lane, "large"), outside)
    os.symlink(outside, os.path.join(lane, "large"))
    assert assert_agree(jvm, lane)["error"] == "PathOutsideError"


# --- headers and the file set -------------------------------------------------------------------
def test_a_header_of_a_future_version_is_refused_in_both(jvm, copy_of):
    lane = copy_of(3)
    path = with_data(lane)[0].path
    raw = read_at(path, 0, 4096)
    patch(path, 0, with_version(raw, 3))
    want = assert_agree(jvm, lane)
    assert want["error"] == "FormatVersionError" and want["path"] == path


def test_bad_headers_and_wrong_sizes_are_skipped_or_damage_alike_in_both(jvm, copy_of):
    lane = copy_of(4)
    names = sorted(n for n in os.listdir(lane) if n.endswith(".sjd"))
    with_records = {f.path for f in with_data(lane)}
    pool = [os.path.join(lane, n) for n in names if os.path.join(lane, n) not in with_records]
    assert pool, "no pool file"
    patch(pool[0], 3, b"'")                                       # bad magic: skipped
    with open(os.path.join(lane, "data-9999999999.sjd"), "wb") as handle:
        handle.write(read_at(pool[-1], 0, 4096) + bytes(100))     # wrong size, no records: skipped
    want = assert_agree(jvm, lane)
    assert len(want["report"]["warnings"]) == 2
    victim = sorted(with_records)[0]
    with open(victim, "r+b") as handle:                           # wrong size with records: damage
        handle.truncate(os.path.getsize(victim) - 4096)
    assert assert_agree(jvm, lane)["error"] == "CorruptJournalError"
    assert_agree(jvm, lane, recover=True)


def test_two_files_with_one_id_fail_alike_in_both(jvm, copy_of):
    lane = copy_of(6)
    source = with_data(lane)[0].path
    shutil.copy(source, os.path.join(lane, "data-0000000000.sjd"))
    want = assert_agree(jvm, lane)
    assert want["offset"] == 16


def test_a_damaged_control_file_fails_alike_in_both(jvm, copy_of):
    lane = copy_of(2)
    control = os.path.join(lane, CONTROL_FILE)
    assert os.path.exists(control)
    good = open(control, "rb").read()
    data = json.loads(good)
    for name, raw, same_message in [
            ("generation changed", good.replace(b'"generation": ', b'"generation": 7', 1), True),
            ("not json", good[:-3], False),
            ("no crc", json.dumps({k: v for k, v in data.items() if k != "crc32c"}).encode(), True),
            ("a newer format", json.dumps({**data, "format": 2}).encode(), True),
            ("a list", b"[1, 2]", False)]:
        with open(control, "wb") as handle:
            handle.write(raw)
        want = assert_agree(jvm, lane, same_message=same_message)
        assert want["path"] == control, name
    # a valid control file naming a new file that is under neither name
    body = {"format": 1, "generation": 9, "old": data["old"] + [["data-0000000777.sjd", 777]],
            "new": [["data-0000000777.sjd", 777]]}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    with open(control, "wb") as handle:
        handle.write(json.dumps({**body, "crc32c": codec_python.crc32c(canonical)}).encode())
    want = assert_agree(jvm, lane)
    assert want["path"] == os.path.join(lane, "data-0000000777.sjd")


def test_the_control_file_canonical_form_is_python_s(jvm, copy_of):
    """Names with characters JSON escapes, keys in another order, ids as
    floats: the CRC is over Python's canonical form, so Java must agree."""
    lane = copy_of(2)
    control = os.path.join(lane, CONTROL_FILE)
    data = json.loads(open(control, "rb").read())
    for extra in ({"note": "caf\u00e9 \"x\" \\ \u2028 \U0001F600"},
                  {"a": [1.5, 2.0, 1e-7, None, True]}, {"zz": {"b": 1, "a": -0.0}}):
        body = {k: v for k, v in data.items() if k != "crc32c"} | extra
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
        with open(control, "wb") as handle:
            handle.write(json.dumps({**body, "crc32c": codec_python.crc32c(canonical)},
                                    ensure_ascii=False).encode())
        assert "error" not in assert_agree(jvm, lane)


def test_a_lane_that_does_not_exist_fails_alike_in_both(jvm, tmp_path):
    assert assert_agree(jvm, str(tmp_path / "nothing"))["error"] == "SparkJournalError"


def test_an_empty_lane_and_a_lane_of_pool_files_read_alike_in_both(jvm, tmp_path):
    lane = str(tmp_path / "empty")
    os.mkdir(lane)
    assert assert_agree(jvm, lane)["records"] == []
    with Journal.open(lane, **OPTIONS):
        pass
    assert assert_agree(jvm, lane)["report"]["files"] >= 2
