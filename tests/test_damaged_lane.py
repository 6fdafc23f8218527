"""A damaged lane never blocks a node's writes, and is never read past quietly.

* Python's writer (``JournalRoot.open_writer``, which a Python sink task opens
  its lane with) skips a lane whose load fails with damage, or that a newer
  sparkjournal wrote, for the next lane, with a warning naming the lane and
  why; ``sparkjournal verify`` names the damaged lane; a lane that is a link
  still fails the open. (The JVM writer's twin: test_jvm_task_write.py.)
* ``JournalSink`` with its default writer (the JVM's where the connector
  loads) lands a batch in other lanes when lane-000 of its root is damaged;
  a read (``format("sparkjournal")`` and ``sparkjournal.read``) fails naming
  the damaged file, and with skipCorrupt=true returns every row the batch
  wrote, once.
"""
from __future__ import annotations

import collections
import logging
import os

import pytest

import sparkjournal
from sparkjournal import JournalRoot, JournalSink
from sparkjournal.cli.main import main
from sparkjournal.format import layout
from sparkjournal.journal.inside import PathOutsideError

from conftest import auto_writer
from lane_surgery import damage_a_sealed_record
from test_journal_format_recovery import rewrite_header, two_sealed_files

OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "journalType": "NIO"}


def events(spark, start: int, count: int, partitions: int):
    return spark.range(start, start + count, numPartitions=partitions).selectExpr(
        "id", "repeat('p', 100) as payload")


def opened_lane(root: str) -> str:
    with JournalRoot(root, **OPTIONS).open_writer() as journal:
        journal.append_add(1, b"written beside the damage")
        return os.path.basename(journal.directory)


def test_a_damaged_lane_is_skipped_by_the_python_writer_and_named(tmp_path, caplog, capsys):
    root = str(tmp_path / "journal")
    damaged = os.path.join(root, "lane-000")
    two_sealed_files(damaged, OPTIONS)
    path, offset = damage_a_sealed_record(damaged)
    with caplog.at_level(logging.WARNING, logger="sparkjournal.task"):
        assert opened_lane(root) == "lane-001"
    (warning,) = [r for r in caplog.records if r.name == "sparkjournal.task"]
    assert warning.levelno == logging.WARNING
    assert f"lane {damaged} skipped" in warning.getMessage()
    assert f"journal file {path} is corrupt at offset {offset}" in warning.getMessage()

    assert main(["verify", root]) == 1
    out = capsys.readouterr().out
    verdicts = {line.split(":")[0]: line for line in out.splitlines() if line.startswith("lane ")}
    assert verdicts["lane lane-000"].endswith(": CORRUPT"), out
    assert verdicts["lane lane-001"].endswith(": clean"), out
    assert f"CORRUPT   {path} offset {offset}:" in out


def test_a_lane_of_a_newer_format_is_skipped_by_the_python_writer_and_named(tmp_path, caplog):
    root = str(tmp_path / "journal")
    newer = os.path.join(root, "lane-000")
    opened_lane(root)
    first = min(n for n in os.listdir(newer) if n.endswith(".sjd"))
    rewrite_header(os.path.join(newer, first), version=layout.FORMAT_VERSION + 1)
    with caplog.at_level(logging.WARNING, logger="sparkjournal.task"):
        assert opened_lane(root) == "lane-001"
    assert f"lane {newer} skipped" in caplog.text and "newer sparkjournal" in caplog.text


def test_a_lane_that_is_a_link_still_fails_the_python_writer(tmp_path):
    root = tmp_path / "journal"
    (tmp_path / "elsewhere").mkdir()
    root.mkdir()
    os.symlink(tmp_path / "elsewhere", root / "lane-000")
    with pytest.raises(PathOutsideError, match="is a symbolic link"):
        opened_lane(str(root))


def test_a_sink_batch_lands_once_beside_a_damaged_lane_and_reads_back_under_skip_corrupt(
        spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    damaged = os.path.join(path, "lane-000")
    sink = JournalSink(path, txnAppId="q", smallBatchRows=0, fileSize="64k", bufferSize="16k",
                       laneIdleTimeout="1s")
    sink(events(spark, 0, 3000, partitions=1), 0)
    wait_lanes_free([damaged])                          # its writer let go after laneIdleTimeout
    file, _offset = damage_a_sealed_record(damaged)

    # One task: no other task's writer, kept in the JVM for a retry to take, hides a failure.
    sink(events(spark, 3000, 2000, partitions=1), 1)
    (written,) = [m for m in sink.history if m.batch == 1]
    assert written.jvm == (auto_writer()[0] == "jvm") and (written.tasks, written.rows) == (1, 2000)
    assert not any(lane.endswith("/lane-000") for lane in written.lanes), written.lanes

    readers = {
        "format": lambda **opts: spark.read.format("sparkjournal").options(**opts).load(path),
        "sparkjournal.read": lambda **opts: sparkjournal.read(spark, path, **opts)}
    for reader, frame in readers.items():
        with pytest.raises(Exception) as caught:
            frame().select("id").collect()
        assert file in str(caught.value), reader
        counted = collections.Counter(row.id for row in frame(skipCorrupt="true").select("id")
                                      .collect())
        assert max(counted.values()) == 1, f"{reader}: a row was read twice"
        assert set(range(3000, 5000)) <= set(counted), \
            f"{reader}: a row of the batch beside the damage is lost"
