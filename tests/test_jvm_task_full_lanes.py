"""addressFullPolicy in the JVM task writer (jvm/.../events/FullLanes.java,
TaskWrite): a lane over maxSizeBytes (or its node root over maxRootSizeBytes)
fails the task with nothing written (FAIL), drops and counts its rows (DROP),
waits holding no lane until space is freed (BLOCK), or writes on (PAGE); the
sizes are counted as Python counts them (maintenance/lane_size.py).

Each task is a run of ``io.sparkjournal.events.TaskWriteTool`` (the helpers of
test_jvm_task_write.py); the lane is made full by a large body nothing
references, as a writer killed while storing one leaves it (an orphan, which
the next Python writer's load removes): so freeing space is a real writer's
load, done while the BLOCKed JVM task waits without the lane."""
from __future__ import annotations

import json
import os
import subprocess
import time

import pytest

from sparkjournal import Journal
from sparkjournal.maintenance.lane_size import lane_bytes, root_bytes
from sparkjournal.spark.committer import BatchCommitter, BatchMetrics
from sparkjournal.spark.task_message import TaskMessage

from test_jvm_format_agreement import jvm  # noqa: F401  (fixture: java launcher, class path)
from test_jvm_append_agreement import tool  # noqa: F401  (fixture: java, class path)
from test_jvm_task_write import (PY_OPTIONS, TOOL, body_file, commit, journal,  # noqa: F401
                                 plan_line, resolved, run_task, task_error, visible_ids)

ORPHAN = 3 << 20                  # the orphaned large body that fills the lane
LIMIT = 2 << 20                   # maxSizeBytes: one 1 MiB data file fits, the orphan does not


@pytest.fixture
def full_lane(tool, journal, tmp_path):
    """(lane, records in it) of lane-000 after batch 0 (ids 0..99) and an orphaned
    large body that takes it past LIMIT."""
    first, _ = run_task(tool, plan_line(journal, "q", 0), [body_file(tmp_path, "a", 0, 100, "q", 0)])
    commit(journal, "q", 0, [first])
    lane = os.path.join(journal[0], first["lane"])
    os.makedirs(os.path.join(lane, "large"), exist_ok=True)
    with open(os.path.join(lane, "large", "00000000000000ab.body"), "wb") as orphan:
        orphan.write(b"\0" * ORPHAN)
    assert lane_bytes(lane) > LIMIT
    return lane, records_in(lane)


def records_in(lane: str) -> int:
    with Journal.read(lane) as snapshot:
        return len(list(snapshot.records())) + len(snapshot.prepared())


def policy(name: str, **limits) -> dict:
    return resolved({**PY_OPTIONS, "maxSizeBytes": str(LIMIT), "addressFullPolicy": name, **limits})


def test_lane_and_root_sizes_are_counted_as_python_counts_them(tool, full_lane, journal, tmp_path):
    lane, _ = full_lane
    size = lane_bytes(lane)
    error = task_error(tool, plan_line(journal, "q", 1, options=policy("FAIL")),
                       [body_file(tmp_path, "b", 100, 5, "q", 1)])
    assert f"lane {lane} holds {size} bytes" in error, error
    root = journal[0]
    error = task_error(tool, plan_line(journal, "q", 1, options=policy(
        "FAIL", maxSizeBytes="-1", maxRootSizeBytes=str(LIMIT))), [body_file(tmp_path, "b", 100, 5, "q", 1)])
    assert f"the lanes of node root {root} (with lane {lane}) hold {root_bytes(root)} bytes" in error
    assert f"over maxRootSizeBytes {LIMIT}" in error and "raise maxRootSizeBytes" in error


def test_fail_fails_the_task_naming_batch_host_lane_size_and_limit_with_nothing_written(
        tool, full_lane, journal, tmp_path):
    lane, before = full_lane
    error = task_error(tool, plan_line(journal, "q", 1, options=policy("FAIL")),
                       [body_file(tmp_path, "b", 100, 50, "q", 1)])
    for part in ("batch 1 of query q on host ", "nothing written, addressFullPolicy is FAIL",
                 f"over maxSizeBytes {LIMIT}", "jobs/page.py", "raise maxSizeBytes"):
        assert part in error, error
    assert records_in(lane) == before and visible_ids(journal[0]) == list(range(100))


def test_drop_writes_nothing_and_the_message_counts_the_rows_for_the_driver(
        tool, full_lane, journal, tmp_path):
    lane, before = full_lane
    out, log_lines = run_task(tool, plan_line(journal, "q", 1, options=policy("DROP")),
                              [body_file(tmp_path, "b", 100, 50, "q", 1),
                               body_file(tmp_path, "c", 150, 30, "q", 1)])
    assert (out["tx"], out["records"], out["rows"], out["dropped"]) == (None, 0, 0, 80)
    assert "addressFullPolicy is DROP" in log_lines, log_lines
    assert records_in(lane) == before
    root, log_uri, _ = journal
    metrics = BatchMetrics("q", 1)
    BatchCommitter(root, PY_OPTIONS, log_uri).commit("q", 1, [TaskMessage.from_json(out)], metrics)
    assert (metrics.dropped_rows, metrics.rows) == (80, 0) and "80 rows DROPPED" in metrics.line()
    assert visible_ids(root) == list(range(100))


def test_page_writes_on_past_the_limit_and_logs_it(tool, full_lane, journal, tmp_path):
    out, log_lines = run_task(tool, plan_line(journal, "q", 1, options=policy("PAGE")),
                              [body_file(tmp_path, "b", 100, 50, "q", 1)])
    assert "addressFullPolicy is PAGE: writing on" in log_lines, log_lines
    commit(journal, "q", 1, [out])
    assert visible_ids(journal[0]) == list(range(150))


def test_block_waits_without_the_lane_until_a_writer_frees_space_then_writes_once(
        tool, full_lane, journal, tmp_path):
    lane, before = full_lane
    java, classpath = tool
    lines = [plan_line(journal, "q", 1, options=policy("BLOCK")),
             body_file(tmp_path, "b", 100, 50, "q", 1)]
    task_input = tmp_path / "task.jsonl"
    task_input.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with open(task_input) as stdin:
        waiting = subprocess.Popen([java, "-cp", classpath, TOOL], stdin=stdin,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2.0)                              # several polls on a full lane
        assert waiting.poll() is None, "BLOCK wrote into a full lane"
        assert records_in(lane) == before
        # The waiting task holds no lane: a Python writer takes it, and its load
        # removes the orphan (the space the task waits for).
        with Journal.open(lane, **PY_OPTIONS) as writer:
            assert writer.report.orphan_bodies_removed == 1
        out, log_text = waiting.communicate(timeout=30)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert waiting.returncode == 0, log_text
    assert "addressFullPolicy is BLOCK" in log_text and "has space again" in log_text, log_text
    message = json.loads(out)
    assert message["rows"] == 50 and message["dropped"] == 0
    commit(journal, "q", 1, [message])
    assert visible_ids(journal[0]) == list(range(150))
