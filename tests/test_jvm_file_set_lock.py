"""JVM readers hold a lane's file-set lock too (journal/fileset.py,
jvm/.../journal/FileSetLock.java): the JDK can only take POSIX record locks,
so Python's exclusive takers (a compaction's swap, a writer's reclaim) also
take an OFD write lock, which a reader's shared record lock in another process
refuses. One JVM holds one lock per lane, whichever path names the lane.
Real processes, real locks on real lanes."""
from __future__ import annotations

import os
import subprocess
import sys

from sparkjournal import Journal
from sparkjournal.journal.fileset import FILES_LOCK, hold_for_reading, try_hold_exclusive
from sparkjournal.maintenance.compactor import compact_lane

from test_jvm_format_agreement import jvm  # noqa: F401  (fixture)

DUMP = "io.sparkjournal.journal.LaneDump"
TWO_SPELLINGS = "io.sparkjournal.journal.FileSetLockTool"
OPTIONS = {"fileSize": 64 << 10, "bufferSize": 16 << 10, "minFiles": 2, "journalType": "NIO"}

# What the JDK's FileChannel.lock(0, Long.MAX_VALUE, true) takes: a shared POSIX record lock.
RECORD_LOCK_HOLDER = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.lockf(fd, fcntl.LOCK_SH)
print("held", flush=True)
sys.stdin.read()
"""


def half_dead_lane(lane: str) -> list[int]:
    """A lane over several files whose every other record is deleted; its live ids."""
    with Journal.open(lane, **OPTIONS) as journal:
        for record_id in range(1, 201):
            journal.append_add(record_id, bytes([record_id % 251]) * 1000, sync=False)
        for record_id in range(1, 201, 2):
            journal.append_delete(record_id, sync=False)
        journal.flush()
    return list(range(2, 201, 2))


def live_ids(lane: str) -> list[int]:
    with Journal.read(lane) as snapshot:
        return sorted(record.record_id for record in snapshot.records())


def started(args: list[str]) -> subprocess.Popen:
    child = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first = child.stdout.readline()
    assert first.startswith(("held", "{")), f"the lock holder did not start: {first!r}"
    assert '"error"' not in first, first
    return child


def test_a_record_lock_of_another_process_keeps_exclusive_takers_out_not_readers(tmp_path):
    lane = str(tmp_path / "lane")
    half_dead_lane(lane)
    holder = started([sys.executable, "-c", RECORD_LOCK_HOLDER, str(tmp_path / "lane" / FILES_LOCK)])
    try:
        assert try_hold_exclusive(lane, 0.2) is None       # a swap waits, a reclaim is put off
        with hold_for_reading(lane):                       # Python readers share it with the JVM's
            pass
    finally:
        holder.communicate("", timeout=30)
    held = try_hold_exclusive(lane, 5.0)
    assert held is not None, "the exclusive lock stayed refused after the record lock was gone"
    held.release()


def test_a_jvm_snapshot_defers_a_compaction_swap_until_it_is_closed(jvm, tmp_path):
    java, classpath = jvm
    lane = str(tmp_path / "lane")
    expected = half_dead_lane(lane)
    reader = started([java, "-cp", classpath, DUMP, lane, "--hold"])
    try:
        report = compact_lane(lane, force=True, swap_wait=0.3, **OPTIONS)
        assert report.swap_deferred, f"the swap went ahead under an open JVM snapshot: {report}"
        assert report.line().endswith("; swap deferred: readers busy")
        assert live_ids(lane) == expected
    finally:
        reader.communicate("", timeout=60)
    assert reader.returncode == 0
    report = compact_lane(lane, force=True, swap_wait=5.0, **OPTIONS)
    assert not report.swap_deferred, f"the swap stayed deferred after the JVM let go: {report}"
    assert live_ids(lane) == expected


def test_two_spellings_of_one_lane_in_one_jvm_share_its_lock(jvm, tmp_path):
    java, classpath = jvm
    (tmp_path / "real").mkdir()
    lane = str(tmp_path / "real" / "lane")
    half_dead_lane(lane)
    os.symlink(tmp_path / "real", tmp_path / "linked")
    # Read as both paths; the snapshot read through the link is closed, the other kept.
    reader = started([java, "-cp", classpath, TWO_SPELLINGS, lane, str(tmp_path / "linked" / "lane")])
    try:
        assert try_hold_exclusive(lane, 0.2) is None, \
            "closing the snapshot of the other spelling dropped the lock of the one still open"
    finally:
        reader.communicate("", timeout=60)
    assert reader.returncode == 0
    held = try_hold_exclusive(lane, 5.0)
    assert held is not None, "the lock stayed held after the JVM closed both snapshots"
    held.release()
