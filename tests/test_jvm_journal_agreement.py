"""The JVM journal layer (jvm/src/main/java/io/sparkjournal/journal) loads a
lane read only exactly as ``Journal.read(lane, defer_crc=False, ...)`` does, on
lanes no fixture holds: random ones written by the project's own Journal
(several writer runs, so files roll, are reclaimed and reused; updates,
deletes, transactions committed, rolled back, left prepared and left open;
large records; compactions, one cut between its control file and its swap).
The damage FORMAT.md names, case by case, is the golden lane corpus's
(tests/golden/lanes, read by test_golden_lanes.py and LaneGoldenTest); here
only what it does not hold: reads without checksums, a second PREPARE, large
bodies damaged three ways, a large folder leading out, two files with one id,
missing and empty lanes. The Python snapshot (records in order with their
bodies, prepared and open transactions, watermarks, the files loaded and the
LoadReport) is compared with what ``io.sparkjournal.journal.LaneDump``
prints, which must be identical; or both must fail with the same kind of
error naming the same file and offset. One JVM per case.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import shutil
import subprocess

import pytest

from sparkjournal import Journal
from sparkjournal.errors import SparkJournalError
from sparkjournal.format import codec_python, layout
from sparkjournal.journal.datafile import COMPACTING_SUFFIX
from sparkjournal.journal.loader import load
from sparkjournal.journal.swap import read_control
from sparkjournal.maintenance.compactor import compact_lane

from lane_surgery import flip, patch, read_at, reseal, scan_lane
from test_jvm_format_agreement import OPTIONS, jvm  # noqa: F401  (jvm: fixture)

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


def assert_agree(jvm, lane: str, recover: bool = False, checksum: bool = True) -> dict:
    """Runs both; requires the same snapshot, or the same kind of error naming
    the same file (and offset, for damage). Messages are each language's own.
    Returns Python's."""
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
def test_without_checksums_a_flipped_body_byte_is_read_alike_in_both(jvm, copy_of):
    lane = copy_of(7)
    files = with_data(lane)
    record = next(r for f in files[:-1] for r in f.records if r.size > 200 and r.rtype <= 2)
    path = next(f.path for f in files if record in f.records)
    flip(path, record.offset + 100)
    assert assert_agree(jvm, lane, checksum=False)["records"]
    assert assert_agree(jvm, lane)["error"] == "CorruptJournalError"


# --- transactions -------------------------------------------------------------------------------
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
def test_two_files_with_one_id_fail_alike_in_both(jvm, copy_of):
    lane = copy_of(6)
    source = with_data(lane)[0].path
    shutil.copy(source, os.path.join(lane, "data-0000000000.sjd"))
    want = assert_agree(jvm, lane)
    assert want["offset"] == 16


def test_a_lane_that_does_not_exist_fails_alike_in_both(jvm, tmp_path):
    assert assert_agree(jvm, str(tmp_path / "nothing"))["error"] == "SparkJournalError"


def test_an_empty_lane_and_a_lane_of_pool_files_read_alike_in_both(jvm, tmp_path):
    lane = str(tmp_path / "empty")
    os.mkdir(lane)
    assert assert_agree(jvm, lane)["records"] == []
    with Journal.open(lane, **OPTIONS):
        pass
    assert assert_agree(jvm, lane)["report"]["files"] >= 2
