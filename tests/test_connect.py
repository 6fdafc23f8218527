"""The sink and the reads from Spark Connect clients (spark/connect.py, sink.py):
a real Connect server started from the installed pyspark with the connector
jar (connect_server.py), real clients in child processes (connect_child.py),
real files. One server serves the default tests; the slow test kills its own."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import connect_server  # noqa: E402
from connect_child import ROWS  # noqa: E402

pytest.importorskip("pyspark")
CHILD = os.path.join(os.path.dirname(__file__), "connect_child.py")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    missing = connect_server.client_missing()
    if missing:
        pytest.skip(missing)
    from sparkjournal.spark import connector
    if connector.jar_unavailable():
        pytest.skip(f"no connector jar: {connector.jar_unavailable()}")
    log = str(tmp_path_factory.mktemp("connect") / "server.log")
    started = connect_server.start(connector.jar_path(), log)
    yield started
    started.stop()


def client(server, *args, timeout: float = 240) -> dict:
    """Runs connect_child.py against ``server``; its JSON answer."""
    done = subprocess.run([sys.executable, CHILD, *args, "--url", server.url],
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def decisions(path: str) -> dict:
    """query -> {batch: Decision} of the journal's commit log."""
    from sparkjournal.events.commit_log import CommitLog
    from sparkjournal.events.log_view import build
    return build(CommitLog(os.path.join(path, "_commits"))).entries


def assert_jvm_wrote(server, query: str, batches) -> None:
    """The server's log says JVM tasks wrote each of ``batches`` of ``query``
    (the connector's own write, JournalDriverWrite), with no Python worker."""
    with open(server.log_path, errors="replace") as handle:
        said = handle.read()
    for batch in batches:
        assert re.search(rf"batch {batch} of query {query}: {ROWS} rows from \d+ JVM tasks "
                         rf"committed", said), f"no JVM write of batch {batch} in the server's log"


def assert_every_event_once(server, path: str, batches: int) -> None:
    """Batch and stream reads over Connect hold ids 0 .. batches * ROWS - 1, each once."""
    read = client(server, "read", "--path", path)
    expected = {"n": batches * ROWS, "distinct": batches * ROWS, "min": 0,
                "max": batches * ROWS - 1}
    assert read == {"batch": expected, "stream": expected}


def test_journal_sink_from_connect_client_writes_each_batch_once_through_the_servers_write(
        server, tmp_path):
    """smallBatchRows=0: every batch goes through the server's format("sparkjournal")
    write keyed by (txnAppId, batch id); a restart from the checkpoint goes on
    exactly where the decisions left off."""
    data = str(tmp_path)
    path = os.path.join(data, "journal")
    args = ("sink", "--data", data, "--txn", "over-connect", "--small-batch-rows", "0")
    first = client(server, *args, "--batches", "3")
    assert first["error"] is None
    again = client(server, *args, "--batches", "2")           # the same query, restarted
    assert again["error"] is None and again["query"] == first["query"]
    decided = decisions(path)
    assert list(decided) == ["over-connect"]
    batches = sorted(decided["over-connect"])
    assert batches == list(range(len(batches))) and len(batches) >= 5
    for decision in decided["over-connect"].values():
        assert decision.committed and decision.rows == ROWS
        assert {tx["lane"] for tx in decision.txs} and all(tx["tx"] >= 1 for tx in decision.txs)
    assert_jvm_wrote(server, "over-connect", batches)
    assert_every_event_once(server, path, len(batches))


@pytest.mark.slow
def test_small_batches_from_connect_are_written_by_the_foreach_batch_process(server, tmp_path):
    """Local mode: a batch of at most smallBatchRows rows is collected and written by
    the sink in the server's foreachBatch process, one transaction a batch."""
    data = str(tmp_path)
    path = os.path.join(data, "journal")
    assert client(server, "sink", "--data", data, "--txn", "small", "--batches", "3")["error"] is None
    decided = decisions(path)["small"]
    assert len(decided) >= 3
    assert all(len(d.txs) == 1 and d.rows == ROWS for d in decided.values())
    assert_every_event_once(server, path, len(decided))


def test_sink_from_connect_without_txn_app_id_fails_before_writing(server, tmp_path):
    data = str(tmp_path)
    said = client(server, "sink", "--data", data, "--batches", "1")
    assert "pass txnAppId='<a stable name for this query>' to JournalSink" in said["error"]
    assert "nothing of this batch was written" in said["error"]
    path = os.path.join(data, "journal")
    assert not os.path.exists(os.path.join(path, "_commits")) or decisions(path) == {}


@pytest.mark.slow
def test_format_stream_from_connect_lands_every_event_once_across_a_restart(server, tmp_path):
    data = str(tmp_path)
    path = os.path.join(data, "journal")
    first = client(server, "format", "--data", data, "--batches", "2")
    assert first["error"] is None
    assert client(server, "format", "--data", data, "--batches", "2")["error"] is None
    decided = decisions(path)
    assert list(decided) == [first["query"]]              # the stable query id
    (batches,) = decided.values()
    assert sorted(batches) == list(range(len(batches))) and len(batches) >= 4
    assert_jvm_wrote(server, first["query"], batches)
    assert_every_event_once(server, path, len(batches))


def test_delete_and_located_read_from_connect_refuse_naming_what_to_do(server, tmp_path):
    said = client(server, "refusals", "--path", str(tmp_path / "journal"))
    assert said["delete"].startswith("SparkJournalError: sparkjournal.delete needs a classic "
                                     "SparkSession")
    assert "spark-submit without spark.api.mode=connect" in said["delete"]
    assert "nothing was deleted" in said["delete"]
    assert "with Spark Connect use spark.read.format('sparkjournal')" in said["read"]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["sink-small-batches", "sink-tasks", "format"])
def test_connect_server_killed_mid_stream_then_restarted_loses_and_repeats_nothing(tmp_path, how):
    """A stream from a Connect client runs until its server (with its Python
    workers) is SIGKILLed amid batches; a new server starts, the client restarts
    the query from its checkpoint, three more batches finish; batch and stream
    reads then hold every id of every decided batch exactly once."""
    missing = connect_server.client_missing()
    if missing:
        pytest.skip(missing)
    import time
    from sparkjournal.spark import connector
    data = str(tmp_path / "data")
    path = os.path.join(data, "journal")
    command = {"sink-small-batches": ["sink", "--txn", "killed"],
               "sink-tasks": ["sink", "--txn", "killed", "--small-batch-rows", "0"],
               "format": ["format"]}[how] + ["--data", data]
    log = str(tmp_path / "server.log")
    server = connect_server.start(connector.jar_path(), log)
    child = subprocess.Popen([sys.executable, CHILD, *command, "--url", server.url],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while sum(map(len, decisions(path).values()) if os.path.isdir(
                os.path.join(path, "_commits")) else [0]) < 3:
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "three batches did not land in 180 s"
            time.sleep(0.1)
        time.sleep(0.3)                                    # into the next batch
    finally:
        server.kill()
        child.kill()
        child.communicate()
    before = {q: len(b) for q, b in decisions(path).items()}
    server = connect_server.start(connector.jar_path(), log)
    try:
        assert client(server, *command, "--batches", "3")["error"] is None
        decided = decisions(path)
        assert len(decided) == 1
        (batches,) = decided.values()
        assert sorted(batches) == list(range(len(batches)))
        # the first of the three may be the replay of the batch the kill interrupted
        # after its decision (Spark had not recorded it finished): found done, skipped
        assert len(batches) >= sum(before.values()) + 2
        assert all(d.committed and d.rows == ROWS for d in batches.values())
        assert_every_event_once(server, path, len(batches))
    finally:
        server.stop()
