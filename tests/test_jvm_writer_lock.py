"""A lane's one-writer lock holds between Python and JVM writers
(journal/lock.py, jvm/.../journal/LaneWriterLock.java): a Python writer's
flock plus OFD write lock and a JVM writer's POSIX record lock on
``journal.lock`` keep each other out, whichever side comes first; each dies
with its process; a second hold within one JVM is refused without dropping
the first; the JVM's WriterProbe sees a writer of either side, and takes an
empty lock table (one a sandbox hides) for a live writer; ``sparkjournal
inspect`` names a JVM writer's process as it names a Python writer's. Real
processes, real locks on real lanes."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sparkjournal import Journal, JournalLockedError
from sparkjournal.cli.paths import lock_holder
from sparkjournal.journal.lock import LaneLock
from sparkjournal.spark.stream_reader import _writer_alive

from test_jvm_format_agreement import jvm  # noqa: F401  (fixture)

TOOL = "io.sparkjournal.journal.LaneWriterLockTool"
OPTIONS = {"fileSize": 64 << 10, "bufferSize": 16 << 10, "minFiles": 2, "journalType": "NIO"}

PYTHON_WRITER = f"""
import sys
from sparkjournal import Journal
journal = Journal.open(sys.argv[1], **{OPTIONS!r})
print("held", flush=True)
sys.stdin.read()
"""


def written_lane(tmp_path) -> str:
    """A lane a Python writer opened, wrote one record to and closed."""
    lane = str(tmp_path / "lane")
    with Journal.open(lane, **OPTIONS) as journal:
        journal.append_add(1, b"first", sync=True)
    return lane


def java_tool(jvm, *args: str) -> tuple[subprocess.Popen, dict]:
    """The lock tool started on ``args``, and the first line it printed."""
    java, classpath = jvm
    child = subprocess.Popen([java, "-cp", classpath, TOOL, *args], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    first = child.stdout.readline()
    if not first.startswith("{") or '"error"' in first:
        child.kill()
        child.wait()
        pytest.fail(f"the lock tool did not start: {first!r}")
    return child, json.loads(first)


def ended(child: subprocess.Popen) -> str:
    """Ends ``child``'s stdin; what else it printed. It must exit 0."""
    rest, _ = child.communicate("", timeout=60)
    assert child.returncode == 0, f"the lock tool exited {child.returncode}"
    return rest


def probe(jvm, lane: str) -> bool:
    child, report = java_tool(jvm, "--probe", lane)
    ended(child)
    return report["alive"]


def test_a_python_writer_keeps_a_jvm_writer_out_until_it_closes(jvm, tmp_path):
    lane = written_lane(tmp_path)
    with Journal.open(lane, **OPTIONS):
        refused, report = java_tool(jvm, lane)
        assert report == {"held": False}
        ended(refused)
    holder, report = java_tool(jvm, lane)
    try:
        assert report == {"held": True}, "the JVM stayed out after the Python writer closed"
    finally:
        ended(holder)


def test_a_jvm_writer_keeps_python_writers_out_and_is_named_and_seen_alive(jvm, tmp_path):
    lane = written_lane(tmp_path)
    holder, report = java_tool(jvm, lane)
    try:
        assert report == {"held": True}
        with pytest.raises(JournalLockedError) as caught:
            Journal.open(lane, **OPTIONS)
        assert f"process {holder.pid} holds" in str(caught.value)
        assert not LaneLock(lane).try_acquire()
        assert _writer_alive(lane)
    finally:
        ended(holder)
    assert not _writer_alive(lane)
    with Journal.open(lane, **OPTIONS) as journal:
        assert [record.record_id for record in journal.records()] == [1]


def test_a_killed_jvm_writer_frees_the_lane_at_once(jvm, tmp_path):
    lane = written_lane(tmp_path)
    holder, report = java_tool(jvm, lane)
    assert report == {"held": True}
    holder.kill()                                  # SIGKILL: no close, no shutdown hook
    holder.wait()
    holder.stdin.close()
    holder.stdout.close()
    with Journal.open(lane, **OPTIONS) as journal:  # no lockWait: free now, not eventually
        assert [record.record_id for record in journal.records()] == [1]


def test_a_killed_python_writer_frees_the_lane_for_the_jvm_at_once(jvm, tmp_path):
    lane = written_lane(tmp_path)
    writer = subprocess.Popen([sys.executable, "-c", PYTHON_WRITER, lane], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "held"
        refused, report = java_tool(jvm, lane)
        assert report == {"held": False}
        ended(refused)
    finally:
        writer.kill()                              # SIGKILL
        writer.wait()
        writer.stdin.close()
        writer.stdout.close()
    holder, report = java_tool(jvm, lane)
    try:
        assert report == {"held": True}, "the lane stayed locked after its Python writer was killed"
    finally:
        ended(holder)


def test_a_second_hold_in_one_jvm_is_refused_without_dropping_the_first(jvm, tmp_path):
    lane = written_lane(tmp_path)
    holder, report = java_tool(jvm, "--twice", lane)
    try:
        assert report == {"first": True, "second": False}
        # the refused second hold opened no descriptor whose close would drop the first
        assert not LaneLock(lane).try_acquire()
    finally:
        rest = ended(holder)
    assert json.loads(rest) == {"again": True}, "the lock was not taken again after close"
    lock = LaneLock(lane)
    assert lock.try_acquire(), "the JVM left the lane held after it closed its lock"
    lock.release()


def test_the_writer_probe_sees_python_and_jvm_writers_and_no_writer(jvm, tmp_path):
    lane = written_lane(tmp_path)
    assert not probe(jvm, lane)
    with Journal.open(lane, **OPTIONS):
        assert probe(jvm, lane), "a Python writer was not seen"
    holder, report = java_tool(jvm, lane)
    try:
        assert report == {"held": True}
        assert probe(jvm, lane), "a JVM writer was not seen"
    finally:
        ended(holder)
    assert not probe(jvm, lane)


def test_an_empty_lock_table_counts_as_a_live_writer(jvm, tmp_path):
    lane = written_lane(tmp_path)
    hidden = tmp_path / "locks"
    hidden.write_text("")                          # what a sandbox that hides /proc/locks shows
    child, report = java_tool(jvm, "--probe-table", str(hidden), lane)
    ended(child)
    assert report == {"alive": True}, "an empty lock table was read as no writer"
    # The kernel's table is never empty to the probe, which holds a lock of its own meanwhile.
    assert not probe(jvm, lane)


def test_inspect_names_a_jvm_writer_as_it_names_a_python_one(jvm, tmp_path):
    lane = written_lane(tmp_path)
    assert lock_holder(lane) == (False, None)
    holder, report = java_tool(jvm, lane)
    try:
        assert report == {"held": True}
        assert lock_holder(lane) == (True, holder.pid)
    finally:
        ended(holder)
    assert lock_holder(lane) == (False, None)
