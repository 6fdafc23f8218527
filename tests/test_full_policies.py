"""addressFullPolicy: what a writer does when its lane (or its node root) is over
maxSizeBytes (maxRootSizeBytes). First the sizes and the policies on a lane
through the Journal API (maintenance/lane_size.py, full_policy.py), then each
policy through the exactly-once sink on real Spark: FAIL fails the batch with
nothing visible, DROP drops and counts, BLOCK waits until maintenance frees
space and then lands the batch once, PAGE writes on."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time

import pytest

from sparkjournal import Journal, JournalFullError, JournalRoot, load_config
from sparkjournal.journal.large import FOLDER as LARGE
from sparkjournal.maintenance.full_policy import DROP, WRITE, admit
from sparkjournal.maintenance.lane_size import check_full, lane_bytes, root_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SMALL = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}
FILE = 64 << 10


def half_dead_lane(lane: str, count: int = 300) -> dict:
    """Records of 1000 bytes, every other one deleted, in sealed files that no
    reclaim can free (each keeps live records); {record id: body} of the live."""
    live = {}
    with Journal.open(lane, **SMALL) as journal:
        for record_id in range(1, count + 1):
            journal.append_add(record_id, bytes([record_id % 251]) * 1000, sync=False)
            live[record_id] = bytes([record_id % 251]) * 1000
        for record_id in range(2, count + 1, 2):
            journal.append_delete(record_id, sync=False)
            del live[record_id]
    return live


def records_of(lane: str) -> dict:
    with Journal.read(lane, **SMALL) as snapshot:
        return {r.record_id: bytes(r.body) for r in snapshot.records()}


# --- sizes --------------------------------------------------------------------------------

def test_lane_size_counts_files_holding_data_and_large_bodies_not_the_free_pool(lane):
    with Journal.open(lane, **SMALL) as journal:
        assert lane_bytes(lane) == 0, "a new lane's pre-created files hold nothing"
        for record_id in range(1, 200):
            journal.append_add(record_id, b"x" * 1000, sync=False)
        journal.flush()
        in_use = len(journal.files)
        assert in_use > 2 and lane_bytes(lane) == in_use * FILE
        for record_id in range(1, 200):
            journal.append_delete(record_id, sync=False)
        journal.append_add(1000, b"y" * 60_000)         # rolls: the dead files are freed
        assert journal.free_files, "the freed files stay on disk, in the pool"
        assert lane_bytes(lane) == len(journal.files) * FILE < in_use * FILE
        journal.append_add(1001, b"z" * 200_000)        # bigger than a data file: large
    body = os.path.getsize(os.path.join(lane, LARGE, os.listdir(os.path.join(lane, LARGE))[0]))
    assert body == 200_000
    assert lane_bytes(lane) >= FILE + body


def test_full_names_the_lane_its_size_the_limit_and_what_to_do(tmp_path):
    root = JournalRoot(str(tmp_path / "root"), **SMALL)
    first, second = root.open_writer(), root.open_writer()
    try:
        for journal in (first, second):
            for record_id in range(1, 150):
                journal.append_add(record_id, b"x" * 1000, sync=False)
            journal.flush()
    finally:
        first.close()
        second.close()
    lane = first.directory
    size, total = lane_bytes(lane), root_bytes(root.path)
    assert total == size + lane_bytes(second.directory)

    assert check_full(lane, load_config({**SMALL, "maxSizeBytes": size})) is None, "at the limit"
    full = check_full(lane, load_config({**SMALL, "maxSizeBytes": size - 1}))
    message = full.message()
    for part in (lane, f"holds {size} bytes", f"maxSizeBytes {size - 1}", "jobs/page.py",
                 "compact", "retention", "raise maxSizeBytes"):
        assert part in message
    full = check_full(lane, load_config({**SMALL, "maxRootSizeBytes": total - 1}))
    assert full.root == root.path and f"hold {total} bytes" in full.message()
    assert "raise maxRootSizeBytes" in full.message()
    assert check_full(lane, load_config({**SMALL, "maxRootSizeBytes": total})) is None


# --- the policies on one lane (Journal API) ----------------------------------------------

def test_fail_and_drop_refuse_and_page_writes_on_logging_once(lane, caplog):
    half_dead_lane(lane)
    limit = lane_bytes(lane) - 1
    caplog.set_level(logging.WARNING, logger="sparkjournal.full")
    for policy in ("FAIL", "DROP", "PAGE"):
        with Journal.open(lane, **SMALL, maxSizeBytes=limit, addressFullPolicy=policy) as journal:
            if policy == "FAIL":
                with pytest.raises(JournalFullError) as error:
                    admit(journal, "batch 7 of query q on host h")
                assert "batch 7 of query q on host h" in str(error.value)
                assert f"holds {limit + 1} bytes" in str(error.value) and lane in str(error.value)
                assert error.value.size == limit + 1 and error.value.limit == limit
            else:
                verdicts = [admit(journal, f"write {n}") for n in range(3)]
                assert verdicts == [DROP if policy == "DROP" else WRITE] * 3
    logged = [r.getMessage() for r in caplog.records]
    assert len([m for m in logged if "addressFullPolicy is DROP" in m]) == 1, logged
    assert len([m for m in logged if "addressFullPolicy is PAGE" in m]) == 1, logged


def test_block_waits_until_a_compaction_in_another_process_frees_space(lane, caplog):
    live = half_dead_lane(lane)
    limit = lane_bytes(lane) - FILE          # a compaction of the half-dead files frees more
    caplog.set_level(logging.WARNING, logger="sparkjournal.full")
    done = threading.Event()
    with Journal.open(lane, **SMALL, maxSizeBytes=limit, addressFullPolicy="BLOCK") as journal:
        waiter = threading.Thread(target=lambda: (admit(journal, "the next write", poll=0.05),
                                                  done.set()))
        waiter.start()
        try:
            assert not done.wait(0.5), "BLOCK admitted a write into a full lane"
            code = ("import sys\nfrom sparkjournal.maintenance.compactor import compact_lane\n"
                    "print(compact_lane(sys.argv[1], force=True, fileSize='64k', bufferSize='16k',"
                    " minFiles=2).line())\n")
            compactor = subprocess.run([sys.executable, "-c", code, lane], capture_output=True,
                                       text=True, env={**os.environ, "PYTHONPATH": REPO})
            assert compactor.returncode == 0, compactor.stderr
            assert "compacted" in compactor.stdout
            assert done.wait(30), "BLOCK did not notice the space freed"
        finally:
            waiter.join(30)
        journal.append_add(5000, b"after the wait")
    live[5000] = b"after the wait"
    assert records_of(lane) == live
    logged = [r.getMessage() for r in caplog.records]
    assert any("addressFullPolicy is BLOCK: the next write waits" in m for m in logged), logged
    assert any("has space again" in m for m in logged), logged
