"""The driver killed while it checkpoints the commit log and while retention
deletes entries (faults.py crash points, SIGKILL), with a reader planning and
reading throughout: every event lands exactly once, every read shows whole
batches only and never fails, and every event keeps its batch's commit time
after its entry is gone.

Real processes, real lanes (the sink's own task writer and committer), real
fsync; no Spark (tests/log_crash_child.py). The default suite kills at each
step once; ``slow`` kills at each of several occurrences."""
from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pytest

from sparkjournal.events.commit_log import default_log_uri
from sparkjournal.events.lane_scan import LaneSlice, scan
from sparkjournal.events.log_state import LogState
from sparkjournal.events.visible_events import node_lanes, read_table
from sparkjournal.faults import CRASH_AT

CHILD = os.path.join(os.path.dirname(__file__), "log_crash_child.py")
BATCHES = 40
POINTS = ("log-checkpoint:times-written", "commit-log:exclusive-written",
          "log-checkpoint:linked", "log-retention:deleting")


def child(*args, crash: str | None = None, **popen):
    env = dict(os.environ)
    env.pop(CRASH_AT, None)
    if crash:
        env[CRASH_AT] = crash
    return subprocess.Popen([sys.executable, CHILD, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def run_kills(tmp_path, kills: list[str]) -> tuple[str, str]:
    path, stop = str(tmp_path / "journal"), str(tmp_path / "stop")
    os.makedirs(path)
    reader = child("read", path, stop)
    try:
        for number, crash in enumerate(kills, 1):
            writer = child("write", path, str(BATCHES * number // (len(kills) + 1) + 6),
                           crash=crash)
            out, err = writer.communicate(timeout=120)
            assert writer.returncode == -9, (f"the writer was to be killed at {crash}: exit "
                                             f"{writer.returncode}\n{out}\n{err[-3000:]}")
        final = child("write", path, str(BATCHES))
        out, err = final.communicate(timeout=120)
        assert final.returncode == 0 and "DONE" in out, err[-3000:]
    finally:
        open(stop, "w").close()
        out, err = reader.communicate(timeout=120)
    assert reader.returncode == 0, f"a read failed while the writer was killed:\n{err[-3000:]}"
    return path, out


def assert_every_event_once_with_its_commit_time(path: str) -> None:
    ids = sorted(read_table(path).column("id").to_pylist())
    assert ids == list(range(BATCHES * 10)), "an event is missing, extra or doubled"
    uri = default_log_uri(path)
    state = LogState(uri)
    assert state.view(refresh=True).last_committed("q") == BATCHES - 1
    times = {b: state.committed_at_ms("q", b) for b in range(BATCHES)}
    assert all(at is not None for at in times.values()), times
    assert len(os.listdir(os.path.join(uri, "q"))) < BATCHES, "retention deleted nothing"
    schema = pa.schema([("id", pa.int64())])
    for lane, node in node_lanes(path):
        for batch in scan(LaneSlice(lane, node, uri), schema, {}):
            for batch_id, committed in zip(batch.column("_batch_id").to_pylist(),
                                           batch.column("_commit_time").to_pylist()):
                assert committed is not None and \
                    int(committed.timestamp() * 1000) == times[batch_id], (batch_id, committed)


def test_driver_killed_in_checkpoint_and_retention_loses_nothing(tmp_path):
    path, reads = run_kills(tmp_path, [f"{point}@2" for point in POINTS])
    assert_every_event_once_with_its_commit_time(path)
    assert int(reads.split()[-1]) > 0


@pytest.mark.slow
@pytest.mark.parametrize("point", POINTS)
def test_driver_killed_at_every_occurrence_loses_nothing(tmp_path, point):
    path, _reads = run_kills(tmp_path, [f"{point}@{n}" for n in (1, 2, 1, 2, 1)])
    assert_every_event_once_with_its_commit_time(path)
