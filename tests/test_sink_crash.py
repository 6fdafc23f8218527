"""The write path under real kills and a real multi-JVM cluster.

Drivers (with their JVM and Python workers: the whole process group) are
killed with SIGKILL at random moments of a running stream and restarted from
the checkpoint; at the end every event of every decided batch is in the journal
exactly once and nothing else is. All ``slow`` (CI's slow runs): 2 kills of the
foreachBatch sink with the driver writing small batches; 12 kills of the
foreachBatch sink with its tasks writing (the default writer, the JVM's where
the connector is built) and of the format sink (the JVM connector's own write),
and 6 with the foreachBatch sink's tasks writing in Python workers
(writer="python"); the local-cluster write. The commit log checkpoints every
2 batches throughout (spark_child.py).
"""
from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("pyspark")

from sparkjournal import read_table  # noqa: E402
from sparkjournal.events.log_state import LogState  # noqa: E402

from conftest import auto_writer  # noqa: E402

CHILD = os.path.join(os.path.dirname(__file__), "spark_child.py")
ROWS_PER_BATCH = 50                    # spark_child.ROWS_PER_BATCH


def start_child(data, sink, log, until=0):
    command = [sys.executable, CHILD, "stream", "--sink", sink, "--data", data]
    if until:
        command += ["--until", str(until)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True,
                            start_new_session=True)


def wait_ready(proc, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 1.0)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("READY"):
                return
            if not line:
                break
    os.killpg(proc.pid, signal.SIGKILL)
    raise AssertionError("the Spark child never started its query")


def decided(path):
    """The decided batch ids of the one query, by the commit log's view (the
    stream's checkpoints and retention have deleted older entries)."""
    view = LogState(os.path.join(path, "_commits")).view()
    queries = view.queries()
    assert len(queries) <= 1, f"one query expected in the commit log, found {queries}"
    if not queries:
        return []
    count, last = view.decided_count(queries[0]), view.last_committed(queries[0])
    assert count == last + 1, f"{count} decided batches up to batch {last}: a gap"
    return list(range(count))


def kill_and_restart(tmp_path, sink, kills, seed):
    rng = random.Random(seed)
    data = str(tmp_path / sink)
    path = os.path.join(data, "journal")
    with open(tmp_path / f"{sink}.stderr", "w") as log:
        history = []
        for _ in range(kills):
            proc = start_child(data, sink, log)
            wait_ready(proc)
            time.sleep(rng.uniform(0.5, 7.0))        # the first batch ends ~3 s after READY
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            history.append(len(decided(path)))
        final = start_child(data, sink, log, until=len(decided(path)) + 3)
        out, _ = final.communicate(timeout=300)
    assert final.returncode == 0, f"the restarted query failed: {out}"
    return path, history


def assert_exactly_once(path, history):
    batches = decided(path)
    assert batches == list(range(len(batches))), f"decided batches have a gap: {batches}"
    assert len(batches) >= history[-1] + 3
    table = read_table(path)
    ids = sorted(table.column("id").to_pylist())
    assert len(ids) == len(set(ids)), "an event landed twice"
    assert ids == list(range(len(batches) * ROWS_PER_BATCH)), "an event is missing or extra"
    print(f"batches decided after each kill: {history}; final {len(batches)} batches, "
          f"{len(ids)} events, each exactly once")


@pytest.mark.slow
@pytest.mark.parametrize("sink", ["smallBatches"])     # the others: 12 kills each
def test_driver_killed_at_random_moments_loses_and_duplicates_nothing(tmp_path, sink):
    path, history = kill_and_restart(tmp_path, sink, kills=2, seed=sink)
    assert_exactly_once(path, history)


@pytest.mark.slow
@pytest.mark.parametrize("sink", ["foreachBatch", "format"])
def test_driver_killed_a_dozen_times_loses_and_duplicates_nothing(tmp_path, sink):
    path, history = kill_and_restart(tmp_path, sink, kills=12, seed=f"slow-{sink}")
    assert_exactly_once(path, history)


@pytest.mark.slow
def test_driver_killed_six_times_with_python_writer_loses_and_duplicates_nothing(tmp_path):
    path, history = kill_and_restart(tmp_path, "python", kills=6, seed="slow-python")
    assert_exactly_once(path, history)


@pytest.mark.slow
def test_local_cluster_writes_each_executor_root_exactly_once(tmp_path):
    result = subprocess.run([sys.executable, CHILD, "cluster", "--data", str(tmp_path)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(next(line for line in result.stdout.splitlines() if line.startswith("{")))
    assert (summary["ids"], summary["distinct"], summary["min"], summary["max"]) == (5000, 5000, 0, 4999)
    roots = {os.path.basename(os.path.dirname(lane)) for lane in summary["lanes"]}
    assert roots == {"node-0", "node-1"}, f"each executor JVM writes its own root: {roots}"
    written = {lane.split(":", 1)[1].rsplit("/", 2)[1] for lanes in summary["batch_lanes"]
               for lane in lanes}
    assert written == {"node-0", "node-1"}, f"both executors' tasks wrote: {written}"
    # Not local mode: small batches stay with the tasks unless smallBatchRows is set.
    start, *batches = summary["log"]
    assert "smallBatchRows=0 (master local-cluster[2,1,1024] is not local mode" in start, start
    writer, tasks = auto_writer()
    assert f"writer={writer} (auto" in start, start
    assert len(batches) == 2 and all(f" records from 4 {tasks} into " in line for line in batches), \
        batches
