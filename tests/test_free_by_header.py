"""Free by header (FORMAT.md, "Reading: where data ends"): of the unsealed
files naming no previous file, all but the lowest-id one hold no records of
their own, and a load takes them as empty without scanning their stale bytes.

Real lanes written by the journal over several writer sessions (files roll,
are reclaimed, freed and reused): the rule finds free files, and loading with
it gives exactly what a load that scans every file gives. Then records of a
file's own id planted in its stale bytes: ignored in a free file, found in the
one file the rule never skips.
"""
from __future__ import annotations

import dataclasses
import random

import pytest

from sparkjournal import Journal
from sparkjournal.format import codec_python, layout
from sparkjournal.journal import loader
from sparkjournal.journal.free_by_header import free_ids

OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


def write_lane(lane: str, seed: int) -> None:
    """Four writer sessions; most records deleted after each, so files are freed."""
    rng = random.Random(seed)
    live, next_id = set(), 1
    for _session in range(4):
        with Journal.open(lane, **OPTIONS) as journal:
            for _ in range(rng.randint(50, 300)):
                journal.append_add(next_id, rng.randbytes(rng.randint(10, 3000)), sync=False)
                live.add(next_id)
                next_id += 1
            for record_id in rng.sample(sorted(live), int(len(live) * 0.8)):
                journal.append_delete(record_id, sync=False)
                live.discard(record_id)
            journal.flush()


def view(lane: str) -> dict:
    """What a read-only load found: every file's data, the live records, the report."""
    loaded = loader.load(lane)
    try:
        return {"files": [(f.file_id, f.n_data, f.end, f.torn_end) for f in loaded.files],
                "live": sorted((k, tuple(v)) for k, v in loaded.state.live.items()),
                "watermarks": (loaded.state.max_record_id, loaded.state.max_tx_id),
                "report": dataclasses.asdict(loaded.report)}
    finally:
        for f in loaded.files:
            f.mapped.close()


def headers(lane: str) -> list:
    loaded = loader.load(lane)
    for f in loaded.files:
        f.mapped.close()
    return loaded.files


def plant_own_record(path: str, file_id: int, record_id: int) -> None:
    """A valid ADD of the file's own id at the first record offset."""
    block = bytearray(layout.record_size(16))
    codec_python.encode_record(block, 0, layout.ADD, 0, 0, layout.file_id32(file_id), record_id,
                               0, 0, b"planted-record!!")
    with open(path, "r+b") as handle:
        handle.seek(layout.FILE_HEADER_SIZE)
        handle.write(block)


@pytest.mark.parametrize("seed", range(6))
def test_a_load_that_skips_free_files_finds_what_a_full_scan_finds(tmp_path, monkeypatch, seed):
    lane = str(tmp_path / "lane")
    write_lane(lane, seed)
    with_rule = view(lane)
    monkeypatch.setattr(loader, "free_ids", lambda _headers: set())
    assert view(lane) == with_rule


def test_the_rule_finds_the_pool_files_the_writer_freed(tmp_path):
    found = 0
    for seed in range(6):
        lane = str(tmp_path / f"lane-{seed}")
        write_lane(lane, seed)
        files = headers(lane)
        free = free_ids(f.header for f in files)
        unrolled = [f for f in files if not f.header.prev_file_id and not f.header.sealed_end]
        assert free == {f.file_id for f in unrolled[1:]}
        assert all(f.n_data == 0 for f in files if f.file_id in free)
        found += len(free)
    assert found >= 3, "the lanes hold no free file: the rule is not exercised"


def test_records_planted_in_a_free_file_are_not_read(tmp_path):
    for seed in range(6):
        lane = str(tmp_path / f"lane-{seed}")
        write_lane(lane, seed)
        files = headers(lane)
        free = sorted(free_ids(f.header for f in files))
        if free:
            break
    else:
        pytest.fail("no seed left a free file")
    before = view(lane)
    target = next(f for f in files if f.file_id == free[0])
    plant_own_record(target.path, target.file_id, 10**9)
    after = view(lane)
    assert after == before
    assert all(record_id != 10**9 for record_id, _version in after["live"])


def test_records_planted_in_the_lowest_unrolled_file_are_found(tmp_path):
    """Before any roll the lane's first file holds the data and names no previous
    file: it is never skipped, and a record of its own id after a foreign word
    past its data is found (a torn tail)."""
    lane = str(tmp_path / "lane")
    with Journal.open(lane, **OPTIONS) as journal:
        journal.append_add(1, b"only", sync=True)
    files = headers(lane)
    assert not free_ids(f.header for f in files) - {f.file_id for f in files[1:]}
    first = files[0]
    assert first.n_data == 1 and not first.header.prev_file_id
    block = bytearray(layout.record_size(16))
    codec_python.encode_record(block, 0, layout.ADD, 0, 0, layout.file_id32(first.file_id), 2, 0, 0,
                               b"planted-record!!")
    with open(first.path, "r+b") as handle:
        handle.seek(first.end)                    # a foreign word ends the data, then the record
        handle.write(b"\xff" * 8 + bytes(block))
    found = view(lane)
    assert found["report"]["torn_tail"] is not None      # a record after the end: a torn tail
    assert found["report"]["torn_tail"]["records_dropped"] == 1
