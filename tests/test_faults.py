"""Faults from outside: a read-only journal folder, a data file or large body
removed or cut short underneath a reader, and a commit log that cannot be
written. Each fails with a message naming what and where, and loses nothing
committed. (A full disk: test_full_disk.py; a lane lock held by a killed
process: test_journal_format_recovery.py::test_lock_of_killed_writer_is_free.)

Read-only folders are real read-only bind mounts (root can write through
chmod), skipped with the reason where mounting is refused."""
from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from sparkjournal import CorruptJournalError, Journal, JournalIOError
from sparkjournal.journal.root import JournalRoot

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


@contextlib.contextmanager
def read_only(path: str):
    """``path`` as a read-only bind mount of itself for the duration."""
    def run(*args):
        return subprocess.run(["mount", *args], capture_output=True, text=True)
    done = run("--bind", path, path)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount {path} (needs root / CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        done = run("-o", "remount,bind,ro", path, path)
        if done.returncode != 0:
            pytest.skip(f"cannot remount {path} read-only: {done.stderr.strip()}")
        yield path
    finally:
        subprocess.run(["umount", "-l", path], check=False)


def body_of(record_id: int) -> bytes:
    return (b"%d|" % record_id * 400)[:1000]


def fill(lane: str, count: int = 200, **options) -> None:
    with Journal.open(lane, **{**OPTIONS, **options}) as journal:
        for record_id in range(1, count + 1):
            journal.append_add(record_id, body_of(record_id), user_type=1, sync=False)


def bodies(snapshot) -> dict:
    return {r.record_id: bytes(r.body) for r in snapshot.records()}


def data_files(lane: str) -> list:
    return sorted(os.path.join(lane, n) for n in os.listdir(lane) if n.endswith(".sjd"))


# --- a read-only journal folder -------------------------------------------------------------

def test_a_read_only_lane_is_read_whole_and_refuses_a_writer_saying_why(lane):
    fill(lane)
    with read_only(lane):
        with Journal.read(lane, **OPTIONS) as snapshot:
            assert bodies(snapshot) == {i: body_of(i) for i in range(1, 201)}
            assert snapshot.report.warnings == []
        with pytest.raises(JournalIOError) as caught:
            Journal.open(lane, **OPTIONS)
        assert caught.value.errno == errno.EROFS
        message = str(caught.value)
        assert lane in message and "Read-only file system" in message
        assert "readers do not" in message and "remount it read-write" in message
    with Journal.open(lane, **OPTIONS) as journal:          # writable again: all there
        assert bodies(journal) == {i: body_of(i) for i in range(1, 201)}


def test_a_read_only_root_refuses_a_new_lane_saying_why(tmp_path):
    root = str(tmp_path / "root")
    fill(os.path.join(root, "lane-000"), 10)
    with read_only(root):
        with pytest.raises(JournalIOError) as caught:
            JournalRoot(root, **OPTIONS).open_writer()
        assert caught.value.errno == errno.EROFS and root in str(caught.value)
        assert {os.path.basename(k) for k in JournalRoot(root, **OPTIONS).read_lanes()} == {"lane-000"}


# --- files removed or cut short underneath a reader -------------------------------------------

def test_a_data_file_cut_short_fails_every_reader_naming_it_and_recovery_reports_the_loss(lane):
    fill(lane)
    victim = data_files(lane)[0]
    os.truncate(victim, 20_000)
    for open_ in (Journal.read, Journal.open):
        with pytest.raises(CorruptJournalError) as caught:
            open_(lane, **OPTIONS)
        assert caught.value.path == victim and "cut it short" in str(caught.value)
    with Journal.read(lane, recover=True, **OPTIONS) as snapshot:   # skipCorrupt's read
        [lost] = snapshot.report.recoveries
        kept = bodies(snapshot)
        assert lost.file == victim and "cannot be listed" in lost.detail
        # what the file still shows is listed; what was cut off cannot be
        assert lost.lost_record_ids == list(range(1, len(lost.lost_record_ids) + 1))
        assert sorted(kept) == list(range(kept and min(kept), 201)) and min(kept) > 1
        assert all(kept[i] == body_of(i) for i in kept)
    assert os.path.getsize(victim) == 20_000           # a reader moved nothing


def test_a_data_file_deleted_under_an_open_snapshot_is_still_read_whole(lane):
    fill(lane)
    with Journal.read(lane, **OPTIONS) as snapshot:
        for path in data_files(lane)[:2]:
            os.unlink(path)
        assert bodies(snapshot) == {i: body_of(i) for i in range(1, 201)}


def test_a_large_body_deleted_under_a_reader_fails_naming_it(lane):
    with Journal.open(lane, largeRecordSize="2k", **OPTIONS) as journal:
        journal.append_add(1, bytes(10_000), user_type=1)
    [name] = os.listdir(os.path.join(lane, "large"))
    with Journal.read(lane, **OPTIONS) as snapshot:
        os.unlink(os.path.join(lane, "large", name))
        with pytest.raises(CorruptJournalError) as caught:
            bytes(snapshot.get(1).body)
    assert name in caught.value.path and "is missing" in str(caught.value)


CHILD = textwrap.dedent("""
    import os, sys
    from sparkjournal import Journal
    lane, victim = sys.argv[1], sys.argv[2]
    with Journal.read(lane, fileSize="64k", bufferSize="16k", minFiles=2) as snapshot:
        os.truncate(victim, 8192)
        total = sum(len(bytes(r.body)) for r in snapshot.records())
        print("READ", total, flush=True)
""")


def test_a_data_file_cut_short_under_an_open_snapshot_never_yields_partial_data(lane):
    """The snapshot maps the file: the kernel stops the reading process (SIGBUS)
    at the first page past the new end. It dies; it never returns a short read.
    The next reader fails naming the file."""
    fill(lane)
    victim = data_files(lane)[0]
    child = subprocess.run([sys.executable, "-c", CHILD, lane, victim], capture_output=True,
                           text=True, env={**os.environ, "PYTHONPATH": REPO}, timeout=60)
    assert "READ" not in child.stdout
    assert child.returncode == -signal.SIGBUS, (child.returncode, child.stderr[-2000:])
    with pytest.raises(CorruptJournalError) as caught:
        Journal.read(lane, **OPTIONS)
    assert caught.value.path == victim


# --- a commit log that cannot be written -----------------------------------------------------

def test_a_commit_log_that_cannot_be_written_fails_the_batch_clearly_and_a_rerun_lands_it_once(
        spark, tmp_path):
    from sparkjournal import JournalSink, read_table
    from sparkjournal.events.commit_log import CommitLog, CommitLogError

    path, log = str(tmp_path / "journal"), str(tmp_path / "commits")

    def events(start, count):
        return spark.range(start, start + count, numPartitions=2).selectExpr(
            "id", "repeat('p', 100) as payload")

    def ids():
        table = read_table(path)
        return sorted(table.column("id").to_pylist()) if table is not None else []

    sink = JournalSink(path, txnAppId="q", commitLog=log, smallBatchRows=0)   # tasks PREPARE
    sink(events(0, 1000), 0)
    with read_only(log):
        with pytest.raises(CommitLogError) as caught:
            sink(events(1000, 1000), 1)
        message = str(caught.value)
        assert "00000000000000000001.json" in message and "Read-only file system" in message
        assert "was not committed" in message and "restart the query" in message
        assert ids() == list(range(1000))                 # the prepared batch is invisible
    restarted = JournalSink(path, txnAppId="q", commitLog=log,      # the driver restarts ...
                            smallBatchRows=0)
    restarted(events(1000, 1000), 1)                             # ... and Spark replays batch 1
    restarted(events(1000, 1000), 1)
    assert [m.skipped for m in restarted.history] == [False, True]
    assert ids() == list(range(2000))
    assert CommitLog(log).batches("q") == [0, 1]
