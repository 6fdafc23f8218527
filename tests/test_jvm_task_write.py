"""Phase one of the two-phase commit done by the JVM
(jvm/src/main/java/io/sparkjournal/events/TaskWrite.java) is a Python task's
phase one: the driver's Python side commits it and Python's readers read it.

Each "task" is one run of ``io.sparkjournal.events.TaskWriteTool`` (a TaskWrite
fed a plan and the files of Arrow IPC bodies that Python's
``event_records.tag`` + ``batch.ipc_bytes`` made). These tests prove that:

* the messages of two JVM tasks pass ``TaskMessage.from_json`` and, committed by
  ``BatchCommitter``, make exactly the events of both tasks visible once to
  ``visible_events.read_table``;
* a task of a decided batch writes nothing and returns no message; a later
  JVM task on the lane COMMITs the prepared transaction the decision lists and
  ROLLs BACK the one it does not (a losing attempt), as ``resolve_lane`` does;
* the PREPARE's XID holds the values Python's ``BatchXid.encode`` writes (with
  quotes, backslashes and non-ASCII in the log path and query id), and the message
  round-trips through TaskMessage;
* a lane a Python writer holds is skipped for the next lane; a lane with a
  pending compaction swap is skipped with a log line; a damaged lane is
  skipped with a warning naming it and its damage, and readers still fail on
  it; so is a lane a newer sparkjournal wrote;
* a commit log with another LOG_ID than the driver's is refused naming both
  ids; a journal option the JVM does not know is refused naming it;
* a task killed (SIGKILL) after some bodies and before its PREPARE leaves an
  open transaction that the lane's next task rolls back; nothing of it is
  visible once the batch is decided without it.
"""
from __future__ import annotations

import dataclasses

import glob
import json
import os
import signal
import subprocess
import time

import pyarrow as pa
import pytest

from sparkjournal import CorruptJournalError, Journal
from sparkjournal.events import event_records
from sparkjournal.format import layout
from sparkjournal.config import load_config
from sparkjournal.events.node import node_id
from sparkjournal.events.resolve import Outcome, commit_log, prepared_outcomes
from sparkjournal.events.visible_events import read_table
from sparkjournal.events.xid import BatchXid
from sparkjournal.journal.batch import ipc_bytes
from sparkjournal.spark.committer import BatchCommitter, BatchMetrics
from sparkjournal.spark.task_message import TaskMessage

from test_jvm_format_agreement import jvm  # noqa: F401  (fixture: java launcher, class path)
from test_jvm_append_agreement import tool  # noqa: F401  (fixture: java, class path)
from test_jvm_journal_agreement import make_lane
from test_journal_format_recovery import rewrite_header, two_sealed_files
from lane_surgery import damage_a_sealed_record

TOOL = "io.sparkjournal.events.TaskWriteTool"
PY_OPTIONS = {"fileSize": "1m", "bufferSize": "8k", "journalType": "NIO"}


def resolved(options: dict) -> dict:
    """Journal options as the JVM task writer takes them: every field of the
    JournalConfig Python resolves them to (no text for the JVM to parse again)."""
    return dataclasses.asdict(load_config(options))


OPTIONS = resolved(PY_OPTIONS)


@pytest.fixture
def journal(tmp_path):
    """(root path, commit log URI, the log's LOG_ID as the driver made it)."""
    root = str(tmp_path / "journal")
    log_uri = str(tmp_path / "commits")
    return root, log_uri, commit_log(log_uri).log_id(create=True)


def body_file(folder, name: str, start: int, rows: int, query: str, batch: int) -> dict:
    """A body line for the tool: events id start..start+rows, tagged and encoded
    as a Python task encodes them, written to a file."""
    data = pa.RecordBatch.from_pydict({"id": pa.array(range(start, start + rows), pa.int64()),
                                       "key": [f"k{i % 7}" for i in range(start, start + rows)]})
    path = os.path.join(str(folder), f"{name}.arrow")
    with open(path, "wb") as out:
        out.write(ipc_bytes(event_records.tag(data, query, batch)).to_pybytes())
    return {"body": path, "rows": rows, "bytes": data.nbytes}


def plan_line(journal, query: str, batch: int, partition: int = 0, attempt: int = 0,
              options: dict | None = None, log_id: str | None = "driver's") -> dict:
    root, log_uri, driver_log_id = journal
    return {"path": root, "options": OPTIONS if options is None else options, "log_uri": log_uri,
            "log_id": driver_log_id if log_id == "driver's" else log_id, "query": query,
            "batch": batch, "partition": partition, "attempt": attempt,
            "task": 1000 + 10 * partition + attempt, "executor": "driver"}


def run_task(tool, plan: dict, bodies: list) -> tuple[dict, str]:
    """One task; (its JSON output, its stderr). Fails unless it exited 0."""
    java, classpath = tool
    text = "".join(json.dumps(line) + "\n" for line in [plan, *bodies])
    done = subprocess.run([java, "-cp", classpath, TOOL], input=text, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, f"TaskWriteTool failed: {done.stdout} {done.stderr}"
    return json.loads(done.stdout), done.stderr


def task_error(tool, plan: dict, bodies: list) -> str:
    java, classpath = tool
    text = "".join(json.dumps(line) + "\n" for line in [plan, *bodies])
    done = subprocess.run([java, "-cp", classpath, TOOL], input=text, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1, f"expected a refusal: {done.stdout} {done.stderr}"
    return json.loads(done.stdout)["error"]


def commit(journal, query: str, batch: int, outputs: list) -> None:
    """The driver's side: the batch's decision from the tasks' messages, then COMMIT."""
    root, log_uri, _ = journal
    messages = [TaskMessage.from_json(out) for out in outputs]
    BatchCommitter(root, PY_OPTIONS, log_uri).commit(query, batch, messages,
                                                     BatchMetrics(query, batch))


def visible_ids(root: str) -> list[int]:
    table = read_table(root)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def prepared_by_tx(lane: str) -> dict:
    with Journal.read(lane) as snapshot:
        return {p.tx_id: p for p in snapshot.prepared()}


# --- a batch written by two JVM tasks, committed by the Python driver -------------------------
def test_two_jvm_tasks_committed_by_the_python_driver_are_read_once(tool, journal, tmp_path):
    root = journal[0]
    first, _ = run_task(tool, plan_line(journal, "q", 0, partition=0),
                        [body_file(tmp_path, "a", 0, 300, "q", 0),
                         body_file(tmp_path, "b", 300, 200, "q", 0)])
    second, _ = run_task(tool, plan_line(journal, "q", 0, partition=1),
                         [body_file(tmp_path, "c", 500, 250, "q", 0)])
    assert visible_ids(root) == [], "prepared, undecided: invisible"
    assert (first["records"], first["rows"], second["records"], second["rows"]) == (2, 500, 1, 250)
    commit(journal, "q", 0, [first, second])
    assert visible_ids(root) == list(range(750))
    for lane in glob.glob(os.path.join(root, "lane-*")):
        assert prepared_by_tx(lane) == {}, "the driver wrote the COMMIT records"


def test_message_json_round_trips_through_python_task_message(tool, journal, tmp_path):
    out, _ = run_task(tool, plan_line(journal, "q", 3, partition=2, attempt=1),
                      [body_file(tmp_path, "a", 0, 10, "q", 3)])
    message = TaskMessage.from_json(out)
    assert message.to_json() == out and list(out) == list(message.to_json())
    assert isinstance(out["write_ms"], float) and isinstance(out["prepare_ms"], float)
    assert out["prepare_ms"] > 0
    root = journal[0]
    with open(os.path.join(root, "NODE_ID")) as node_file:
        node = node_file.read().strip()
    assert (message.node, message.root, message.lane, message.partition, message.attempt,
            message.dropped, message.records, message.rows) == (node, root, "lane-000", 2, 1, 0, 1, 10)
    assert message.host == os.uname().nodename


def test_prepare_xid_holds_the_values_python_batch_xid_encodes(tool, tmp_path):
    """EVENTS.md, XIDs: readers depend on the values, not the layout; the JVM
    writes its canonical form, Python json.dumps's."""
    log_uri = str(tmp_path / 'log é "quoted" \\ \u2603 \U0001f600')
    journal = (str(tmp_path / "journal"), log_uri, commit_log(log_uri).log_id(create=True))
    query = 'q-é"\\\t\x7f\U0001f600'
    out, _ = run_task(tool, plan_line(journal, query, 12, partition=3, attempt=2),
                      [body_file(tmp_path, "a", 0, 5, query, 12)])
    (prepared,) = prepared_by_tx(os.path.join(journal[0], out["lane"])).values()
    assert prepared.tx_id == out["tx"]
    written_at = BatchXid.decode(prepared.xid).prepared_at_ms      # the task's clock
    assert written_at > 0
    expected = BatchXid(log_uri, query, 12, 3, 2, 1000 + 30 + 2, 0, written_at)
    assert BatchXid.decode(prepared.xid) == expected
    assert json.loads(bytes(prepared.xid)) == json.loads(expected.encode())


# --- decided batches, winners and losers ------------------------------------------------------
def test_a_task_of_a_decided_batch_writes_nothing_and_returns_no_message(tool, journal, tmp_path):
    first, _ = run_task(tool, plan_line(journal, "q", 0), [body_file(tmp_path, "a", 0, 50, "q", 0)])
    commit(journal, "q", 0, [first])
    lane = os.path.join(journal[0], "lane-000")
    before = {name: os.path.getsize(os.path.join(lane, name)) for name in os.listdir(lane)}
    with Journal.read(lane) as snapshot:
        records = len(list(snapshot.records()))
    replay, _ = run_task(tool, plan_line(journal, "q", 0, attempt=1),
                         [body_file(tmp_path, "b", 1000, 50, "q", 0)])
    assert replay == {"message": None}
    assert {name: os.path.getsize(os.path.join(lane, name)) for name in os.listdir(lane)} == before
    with Journal.read(lane) as snapshot:
        assert len(list(snapshot.records())) == records and snapshot.prepared() == []
    assert visible_ids(journal[0]) == list(range(50))


def test_the_next_jvm_task_commits_the_listed_attempt_and_rolls_back_the_losing_one(
        tool, journal, tmp_path):
    root, log_uri, _ = journal
    loser, _ = run_task(tool, plan_line(journal, "q", 1, attempt=0),
                        [body_file(tmp_path, "a", 0, 40, "q", 1)])
    winner, _ = run_task(tool, plan_line(journal, "q", 1, attempt=1),
                         [body_file(tmp_path, "b", 100, 40, "q", 1)])
    lane = os.path.join(root, "lane-000")
    assert loser["lane"] == winner["lane"] == "lane-000"
    prepared = prepared_by_tx(lane)
    assert set(prepared) == {loser["tx"], winner["tx"]}
    # The decision only (no COMMIT records yet): the lane's next writer must end both.
    commit_log(log_uri).record("q", 1, [TaskMessage.from_json(winner).decided()])
    after, log_lines = run_task(tool, plan_line(journal, "q", 2),
                                [body_file(tmp_path, "c", 200, 10, "q", 2)])
    assert after["lane"] == "lane-000"
    remaining = prepared_by_tx(lane)
    assert set(remaining) == {after["tx"]}, "both of batch 1 ended, batch 2's still prepared"
    with Journal.read(lane) as snapshot:
        live = {record.record_id for record in snapshot.records()}
    assert set(prepared[winner["tx"]].record_ids) <= live
    assert not set(prepared[loser["tx"]].record_ids) & live
    assert f"committed tx [{winner['tx']}], rolled back tx [{loser['tx']}]" in log_lines
    assert visible_ids(root) == list(range(100, 140))


def test_the_jvm_ends_prepared_transactions_by_pythons_rule(tool, journal, tmp_path):
    """Foreign XIDs and undecided batches stay prepared; an XID of another commit
    log is decided by that log; a batch that will never be decided (a later one
    is) is rolled back; exactly as Python's prepared_outcomes says."""
    root, log_uri, _ = journal
    other = str(tmp_path / "other-commits")
    lane = os.path.join(root, "lane-000")
    node = node_id(root)
    xids = {"foreign": b"not a sparkjournal xid",
            "other log, listed": BatchXid(other, "q2", 5).encode(),
            "other log, not listed": BatchXid(other, "q2", 5, 1).encode(),
            "never decided": BatchXid(log_uri, "q", 1).encode(),
            "undecided": BatchXid(log_uri, "q", 7).encode()}
    txs = {}
    with Journal.open(lane, **PY_OPTIONS) as writer:
        for name, xid in xids.items():
            tx = txs[name] = writer.next_tx_id()
            writer.append_add_tx(tx, writer.next_record_id(), name.encode(), user_type=0)
            writer.prepare(tx, xid, sync=True)
    commit_log(other).record("q2", 5, [{"node": node, "lane": "lane-000",
                                        "tx": txs["other log, listed"], "rows": 1}])
    commit_log(log_uri).record("q", 2, [])
    with Journal.read(lane) as snapshot:
        expected = prepared_outcomes(snapshot, node, "lane-000")
        records = {p.tx_id: p.record_ids for p in snapshot.prepared()}
    assert [expected[txs[name]] for name in xids] == [
        Outcome.FOREIGN, Outcome.COMMITTED, Outcome.ABORTED, Outcome.ABORTED, Outcome.UNDECIDED]
    out, _ = run_task(tool, plan_line(journal, "q", 8), [body_file(tmp_path, "a", 0, 5, "q", 8)])
    assert out["lane"] == "lane-000"
    with Journal.read(lane) as snapshot:
        left = {p.tx_id for p in snapshot.prepared()}
        live = {record.record_id for record in snapshot.records()}
    assert left == {txs["foreign"], txs["undecided"], out["tx"]}
    assert live == set(records[txs["other log, listed"]])


# --- lane choice ------------------------------------------------------------------------------
def test_a_lane_held_by_a_python_writer_is_skipped_for_the_next(tool, journal, tmp_path):
    root = journal[0]
    os.makedirs(root)
    with Journal.open(os.path.join(root, "lane-000"), **PY_OPTIONS):
        out, _ = run_task(tool, plan_line(journal, "q", 0),
                          [body_file(tmp_path, "a", 0, 20, "q", 0)])
    assert out["lane"] == "lane-001"
    commit(journal, "q", 0, [out])
    assert visible_ids(root) == list(range(20))


def test_a_lane_with_a_pending_compaction_swap_is_skipped_with_a_log_line(tool, journal, tmp_path):
    root = journal[0]
    os.makedirs(root)
    make_lane(os.path.join(root, "lane-000"), 2)            # seed 2: its swap is deferred
    out, log_lines = run_task(tool, plan_line(journal, "q", 0),
                              [body_file(tmp_path, "a", 0, 20, "q", 0)])
    assert out["lane"] == "lane-001"
    assert "lane-000 skipped" in log_lines and "compaction swap pending" in log_lines


def test_a_damaged_lane_is_skipped_by_the_jvm_writer_and_named(tool, journal, tmp_path):
    root = journal[0]
    damaged = os.path.join(root, "lane-000")
    two_sealed_files(damaged, {**PY_OPTIONS, "fileSize": "64k"})
    path, offset = damage_a_sealed_record(damaged)
    out, log_lines = run_task(tool, plan_line(journal, "q", 0),
                              [body_file(tmp_path, "a", 0, 20, "q", 0)])
    assert out["lane"] == "lane-001"
    assert "WARNING" in log_lines and f"lane {damaged} skipped" in log_lines, log_lines
    assert f"journal file {path} is corrupt at offset {offset}" in log_lines, log_lines
    commit(journal, "q", 0, [out])
    with pytest.raises(CorruptJournalError) as caught:
        visible_ids(root)
    assert caught.value.path == path, "readers still fail on the damaged lane"


def test_a_lane_of_a_newer_format_is_skipped_by_the_jvm_writer_and_named(tool, journal, tmp_path):
    root = journal[0]
    newer = os.path.join(root, "lane-000")
    with Journal.open(newer, **PY_OPTIONS) as writer:
        writer.append_add(1, b"written by a newer sparkjournal")
        first = writer.files[0].path
    rewrite_header(first, version=layout.FORMAT_VERSION + 1)
    out, log_lines = run_task(tool, plan_line(journal, "q", 0),
                              [body_file(tmp_path, "a", 0, 20, "q", 0)])
    assert out["lane"] == "lane-001"
    assert f"lane {newer} skipped" in log_lines and "newer sparkjournal" in log_lines, log_lines


# --- refusals ---------------------------------------------------------------------------------
def test_a_commit_log_with_another_log_id_is_refused_naming_both(tool, journal, tmp_path):
    error = task_error(tool, plan_line(journal, "q", 0, log_id="0123abcd"),
                       [body_file(tmp_path, "a", 0, 5, "q", 0)])
    assert error.startswith("SinkTaskException: the commit log ")
    assert f"LOG_ID {journal[2]} here, 0123abcd on the driver" in error
    assert not os.path.exists(journal[0]), "nothing written"


def test_an_option_the_jvm_does_not_know_is_refused_naming_it(tool, journal, tmp_path):
    # Every option config.py declares is placed in the JVM (TaskWriteOptions); one
    # declared after it would be refused, never ignored.
    error = task_error(tool, plan_line(journal, "q", 0, options={**OPTIONS, "maxWidgets": 3}),
                       [body_file(tmp_path, "a", 0, 5, "q", 0)])
    assert "option maxWidgets is not a journal option the JVM task writer knows" in error, error
    assert not os.path.exists(journal[0])


def test_option_text_is_refused_the_jvm_takes_only_resolved_values(tool, journal, tmp_path):
    error = task_error(tool, plan_line(journal, "q", 0, options={**OPTIONS, "fileSize": "1m"}),
                       [body_file(tmp_path, "a", 0, 5, "q", 0)])
    assert "option fileSize = 1m is not a resolved" in error and "load_config" in error
    assert not os.path.exists(journal[0])


def test_unlimited_sizes_and_a_policy_without_a_limit_are_written(tool, journal, tmp_path):
    # every journal option at its default but these: the JVM places each option Python has
    options = resolved({**PY_OPTIONS, "maxSizeBytes": "-1", "addressFullPolicy": "FAIL",
                        "dirMode": "0750", "largeRecordSize": 0})
    out, _ = run_task(tool, plan_line(journal, "q", 0, options=options),
                      [body_file(tmp_path, "a", 0, 5, "q", 0)])
    assert out["rows"] == 5


def test_bodies_above_large_record_size_are_large_records_python_reads_and_keeps(
        tool, journal, tmp_path):
    """FORMAT.md, "Large records": the JVM task writer stores a body above
    largeRecordSize in large/ (synced before its reference), the rest inline;
    Python's reader reads every event once and Python's writer, loading the lane,
    finds every body referenced (no orphan removed) and every CRC right."""
    root = journal[0]
    options = resolved({**PY_OPTIONS, "largeRecordSize": "2k"})
    out, _ = run_task(tool, plan_line(journal, "q", 0, options=options),
                      [body_file(tmp_path, "a", 0, 400, "q", 0),       # ~5 KiB: large
                       body_file(tmp_path, "b", 400, 3, "q", 0)])      # ~1 KiB: inline
    commit(journal, "q", 0, [out])
    assert visible_ids(root) == list(range(403))
    lane = os.path.join(root, out["lane"])
    bodies = os.listdir(os.path.join(lane, "large"))
    assert len(bodies) == 1 and bodies[0].endswith(".body") and len(bodies[0]) == 21, bodies
    with Journal.read(lane) as snapshot:
        kinds = sorted(record.large for record in snapshot.records())
    assert kinds == [False, True]
    with Journal.open(lane, **PY_OPTIONS) as writer:
        assert writer.report.orphan_bodies_removed == 0
        assert max(len(record.body) for record in writer.records()) > 2048
    assert os.listdir(os.path.join(lane, "large")) == bodies


# --- a task killed mid-transaction ------------------------------------------------------------
def test_a_task_killed_before_its_prepare_is_rolled_back_by_the_next_and_never_visible(
        tool, journal, tmp_path):
    root = journal[0]
    lane = os.path.join(root, "lane-000")
    java, classpath = tool
    killed = subprocess.Popen([java, "-cp", classpath, TOOL], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [plan_line(journal, "q", 0, attempt=0),
                 # Bodies larger than bufferSize: each is written (synced) as it is appended.
                 body_file(tmp_path, "a", 0, 3000, "q", 0),
                 body_file(tmp_path, "b", 3000, 3000, "q", 0)]
        killed.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        killed.stdin.flush()                       # stdin stays open: the task waits for more
        deadline = time.monotonic() + 30
        open_txs = {}
        while time.monotonic() < deadline:
            if os.path.isdir(lane) and glob.glob(os.path.join(lane, "data-*")):
                with Journal.read(lane) as snapshot:
                    open_txs = snapshot.open_transactions()
                if any(len(ids) == 2 for ids in open_txs.values()):
                    break
            time.sleep(0.05)
        assert any(len(ids) == 2 for ids in open_txs.values()), open_txs
        killed.send_signal(signal.SIGKILL)
    finally:
        killed.kill()
        killed.wait(timeout=30)
    (dead_tx, dead_records), = open_txs.items()
    retry, _ = run_task(tool, plan_line(journal, "q", 0, attempt=1),
                        [body_file(tmp_path, "c", 10_000, 100, "q", 0)])
    assert retry["lane"] == "lane-000" and retry["tx"] != dead_tx
    with Journal.read(lane) as snapshot:
        assert snapshot.open_transactions() == {}, "the retry's open rolled it back"
        assert set(p.tx_id for p in snapshot.prepared()) == {retry["tx"]}
    commit(journal, "q", 0, [retry])
    assert visible_ids(root) == list(range(10_000, 10_100))
    with Journal.read(lane) as snapshot:
        assert not set(dead_records) & {record.record_id for record in snapshot.records()}


def test_two_tasks_at_once_take_two_lanes(tool, journal, tmp_path):
    root = journal[0]
    java, classpath = tool
    tasks = [subprocess.Popen([java, "-cp", classpath, TOOL], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    try:
        for partition, task in enumerate(tasks):
            lines = [plan_line(journal, "q", 0, partition=partition),
                     body_file(tmp_path, f"p{partition}", 1000 * partition, 3000, "q", 0)]
            task.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
            task.stdin.flush()                  # both hold a lane, waiting for more bodies
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and len(glob.glob(os.path.join(root, "lane-*",
                                                                          "data-*"))) < 2:
            time.sleep(0.05)
        outputs = []
        for task in tasks:
            out, err = task.communicate(timeout=60)
            assert task.returncode == 0, f"{out} {err}"
            outputs.append(json.loads(out))
    finally:
        for task in tasks:
            task.kill()
            task.wait(timeout=30)
    assert sorted(out["lane"] for out in outputs) == ["lane-000", "lane-001"]
    commit(journal, "q", 0, outputs)
    assert visible_ids(root) == sorted(list(range(3000)) + list(range(1000, 4000)))
