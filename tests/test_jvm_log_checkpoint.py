"""The JVM driver's commit-log checkpoints (jvm/.../events/LogCheckpointWriter.java,
LogRetention.java, LogMaintenance.java) are Python's: on the same log both write
checkpoints of the same values (each lays its JSON out as it likes: JSON.md,
"Writer requirements") and the same commit-time segment bytes, Python reads the
JVM's, and the checkpoint lock keeps a Python and a JVM checkpointer apart."""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess

import pytest

from sparkjournal.events.commit_log import CommitLog
from sparkjournal.events.log_checkpoint import parse
from sparkjournal.events.log_state import LogState
from sparkjournal.events.log_view import build
from sparkjournal.maintenance import log_checkpointer
from sparkjournal.spark import jvm_build

from jvm_tools import tools_classpath

TOOL = "io.sparkjournal.events.LogMaintenanceTool"
NOW_MS = 1764250099000
U64 = (1 << 64) - 1


@pytest.fixture(scope="module")
def java():
    reason = jvm_build.jvm_unavailable()
    if reason:
        pytest.skip(f"the JVM connector cannot be built: {reason}")
    classpath = os.pathsep.join([tools_classpath(), os.path.join(jvm_build._pyspark_jars()[1], "*")])
    return [jvm_build.java_path(), "-cp", classpath, TOOL]


def run(java, *args) -> str:
    done = subprocess.run([*java, *map(str, args)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.strip()


def decide(log: CommitLog, rng: random.Random, query: str, batches: range) -> None:
    """Entries of every kind a fold meets: lanes of two nodes, holes in tx ids,
    tx ids at the u64 end, absent host and root, an aborted epoch written again,
    a gap in batch ids, a decision naming nothing."""
    for batch in batches:
        if rng.random() < 0.15:
            continue                                          # a gap
        epoch = 0
        if rng.random() < 0.15:
            log.record(query, batch, [], 0, aborted=True)
            epoch = 1
        txs = []
        for node in rng.sample(["n1@h1", "n2@h2", "ü@hôst"], rng.randint(0, 2)):
            tx = rng.choice([rng.randint(1, 40), U64 - rng.randint(0, 3)])
            entry = {"node": node, "lane": rng.choice(["lane-000", "lane-001"]), "tx": tx,
                     "rows": rng.randint(0, 9), "bytes": rng.randint(0, 999)}
            if rng.random() < 0.7:
                entry.update(host=node.split("@")[1], root="/r")
            txs.append(entry)
        log.record(query, batch, txs, epoch)


def files(folder: str) -> dict[str, object]:
    """{relative path: content} of the log's files: a JSON file's parsed values, any
    other file's bytes."""
    found = {}
    for where, _dirs, names in os.walk(folder):
        for name in names:
            if not name.endswith(".lock"):
                path = os.path.join(where, name)
                with open(path, "rb") as handle:
                    raw = handle.read()
                found[os.path.relpath(path, folder)] = json.loads(raw) if name.endswith(".json") else raw
    return found


@pytest.mark.parametrize("seed", range(3))
def test_the_jvm_writes_the_checkpoint_and_commit_times_python_writes(java, tmp_path, seed):
    rng = random.Random(seed)
    py, jvm = str(tmp_path / "py"), str(tmp_path / "jvm")
    log = CommitLog(py)
    for round_ in range(3):                                   # from no checkpoint, then from one
        for query in ("q-a", "q-b", f"batch-write-{seed}{round_}"):
            start = 0 if query.startswith("batch-write") else 20 * round_
            decide(log, rng, query, range(start, start + (1 if query.startswith("batch") else 20)))
        shutil.rmtree(jvm, ignore_errors=True)
        shutil.copytree(py, jvm)
        name, _folded = log_checkpointer.checkpoint(log, now_ms=NOW_MS + round_)
        assert run(java, "checkpoint", jvm, NOW_MS + round_) == name
        assert files(jvm) == files(py)
        jvm_log = CommitLog(jvm)
        with open(os.path.join(jvm, "_checkpoints", name), "rb") as handle:
            parse(handle.read(), name, int(name[:-5]))
        assert build(jvm_log).checkpoint_name == name
    assert run(java, "checkpoint", jvm, NOW_MS) == "none"


def test_the_jvm_applies_retention_as_python_does(java, tmp_path):
    rng = random.Random(7)
    py, jvm = str(tmp_path / "py"), str(tmp_path / "jvm")
    log = CommitLog(py)
    decide(log, rng, "q", range(0, 30))
    log_checkpointer.checkpoint(log, now_ms=NOW_MS)
    decide(log, rng, "q", range(30, 40))
    shutil.copytree(py, jvm)
    later = os.path.getmtime(os.path.join(py, "_checkpoints")) + 10
    run(java, "maintain", jvm, 3, 0, int(later * 1000))
    log_checkpointer.checkpoint(log, now_ms=int(later * 1000))
    log_checkpointer.expire(log, 3, 0, now=later)
    assert files(jvm) == files(py)
    assert len(os.listdir(os.path.join(jvm, "q"))) < 20, "covered entries deleted"
    state, expected = LogState(jvm), LogState(py)
    for batch in range(40):
        assert state.committed_at_ms("q", batch) == expected.committed_at_ms("q", batch)


def test_the_checkpoint_lock_keeps_python_and_the_jvm_apart(java, tmp_path):
    log = CommitLog(str(tmp_path / "log"))
    decide(log, random.Random(1), "q", range(3))
    holder = subprocess.Popen([*java, "hold", log.base], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        config = type("Config", (), {"commitLogRetainTime": 0, "commitLogRetainBatches": 0})
        assert "another process" in log_checkpointer.maintain(log, config).skipped
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    fd = log_checkpointer._checkpoint_lock(log)
    assert fd is not None
    try:
        assert run(java, "hold", log.base) == "refused"
    finally:
        os.close(fd)
    assert run(java, "hold", log.base) == "held"
