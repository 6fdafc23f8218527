"""An operator's abort with real Spark: a writer query (a spark-submit-like
driver process, tests/spark_child.py) is killed after its tasks PREPAREd a
batch and before its driver decided it, while another query keeps writing
into the same journal and a stream reads it. `sparkjournal transactions`
lists the batch; `sparkjournal abort` releases the stream; the writer restarts
from its checkpoint, Spark replays the batch, the sink writes it again (epoch
1); every event is read exactly once by a batch read and by the stream."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from sparkjournal import JournalSink
from sparkjournal.cli.main import main
from sparkjournal.events.log_state import LogState

sys.path.insert(0, os.path.dirname(__file__))
from test_sink_crash import CHILD, ROWS_PER_BATCH, wait_ready  # noqa: E402

OTHER = 1_000_000          # the other query's ids start here


def writer_query(data: str, log, crash_at: str | None, until: int) -> subprocess.Popen:
    env = dict(os.environ)
    env.pop("SPARKJOURNAL_CRASH_AT", None)
    if crash_at:
        env["SPARKJOURNAL_CRASH_AT"] = crash_at
    return subprocess.Popen([sys.executable, CHILD, "stream", "--sink", "python", "--data", data,
                             "--until", str(until)], stdout=subprocess.PIPE, stderr=log,
                            text=True, start_new_session=True, env=env)


def the_writer(path: str) -> str:
    queries = [q for q in LogState(os.path.join(path, "_commits")).view(refresh=True).queries()
               if q != "other"]
    assert len(queries) == 1, queries
    return queries[0]


def transactions(path: str, capsys) -> dict:
    capsys.readouterr()
    assert main(["transactions", path, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_abort_releases_a_stream_held_by_a_killed_writer_and_its_replay_lands_once(
        spark, tmp_path, capsys):
    data = str(tmp_path)
    path = os.path.join(data, "journal")
    with open(tmp_path / "child.log", "w") as log:
        child = writer_query(data, log, "commit:before-decision@3", until=10)
        wait_ready(child)
        assert child.wait(timeout=240) == -signal.SIGKILL        # killed at batch 2's decision
    query = the_writer(path)
    # Another writer keeps landing events into the same lanes meanwhile.
    other = JournalSink(path, txnAppId="other", smallBatchRows=0, writer="python")
    for batch in range(2):
        other(spark.range(OTHER + batch * 100, OTHER + (batch + 1) * 100, numPartitions=2)
              .selectExpr("id", "current_timestamp() as ts", "repeat('x', 100) as payload"), batch)
    seen = []
    stream = (spark.readStream.format("sparkjournal").load(path).writeStream
              .foreachBatch(lambda frame, _b: seen.extend(r.id for r in frame.select("id").collect()))
              .option("checkpointLocation", str(tmp_path / "reader")).start())
    try:
        stream.processAllAvailable()
        found = transactions(path, capsys)
        [hanging] = found["undecided"]
        assert (hanging["query"], hanging["batch"], hanging["epoch"]) == (query, 2, 0)
        assert hanging["rows"] == ROWS_PER_BATCH
        held = hanging["held_back_events"]
        assert held > 0 and len([i for i in seen if i >= OTHER]) == 200 - held
        assert main(["abort", path, "--query", query, "--batch", "2", "--yes"]) == 0
        stream.processAllAvailable()
        assert sorted(seen) == list(range(2 * ROWS_PER_BATCH)) + list(range(OTHER, OTHER + 200))
        assert transactions(path, capsys)["undecided"] == []
        # The writer returns from its checkpoint: Spark replays batch 2, written at epoch 1.
        with open(tmp_path / "child.log", "a") as log:
            child = writer_query(data, log, None, until=2 + 5)     # other's 2 + the writer's 5
            wait_ready(child)
            assert child.wait(timeout=240) == 0
        view = LogState(os.path.join(path, "_commits")).view(refresh=True)
        landed = view.last_committed(query) + 1
        assert landed >= 5 and view.decided_count(query) == landed     # no gap, 2 once
        assert view.decision(query, 2) is None or view.decision(query, 2).epoch == 1
        stream.processAllAvailable()
    finally:
        stream.stop()
    expected = list(range(landed * ROWS_PER_BATCH)) + list(range(OTHER, OTHER + 200))
    batch_read = sorted(r.id for r in spark.read.format("sparkjournal").load(path)
                        .select("id").collect())
    assert batch_read == expected
    assert sorted(seen) == expected


def abort_from_a_task(path: str, query: str, batch: int):
    """A UDF that runs `sparkjournal abort` once, from inside the batch's own
    task, half a second into it: the operator's abort lands while the batch is
    being written, usually after the task read its epoch (then the driver's
    commit loses the race), at times before (then the task writes the next
    epoch at once)."""
    from pyspark.sql import functions

    def run(value):
        marker = os.path.join(path, f".aborted-{batch}")
        if not os.path.exists(marker):
            open(marker, "w").close()
            import time
            time.sleep(0.5)
            from sparkjournal.cli.main import main as command
            assert command(["abort", path, "--query", query, "--batch", str(batch), "--yes"]) == 0
        return value
    return functions.udf(run, "long")


def journal_ids(spark, path: str) -> list[int]:
    return sorted(r.id for r in spark.read.format("sparkjournal").load(path).select("id").collect())


@pytest.mark.parametrize("writer", ["python", "jvm"])
def test_an_abort_racing_the_drivers_commit_loses_and_doubles_nothing(spark, tmp_path, writer):
    from sparkjournal.events.commit_log import BatchAbortedError
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="raced", smallBatchRows=0, writer=writer)
    sink(spark.range(0, 100, numPartitions=1).selectExpr("id"), 0)
    racing = spark.range(100, 200, numPartitions=1).select(
        abort_from_a_task(path, "raced", 1)("id").alias("id"))
    try:
        sink(racing, 1)
        lost_race = False                          # the abort came before the task's epoch
    except BatchAbortedError as error:
        assert "aborted by an operator" in str(error) and "Restart the query" in str(error)
        assert journal_ids(spark, path) == list(range(100)), "nothing of the aborted epoch shows"
        lost_race = True
        sink(spark.range(100, 200, numPartitions=1).selectExpr("id"), 1)   # the query's restart
    log = LogState(os.path.join(path, "_commits")).view(refresh=True)
    assert log.decision("raced", 1).epoch == 1 and log.decision("raced", 1).committed
    assert journal_ids(spark, path) == list(range(200))
    print(f"the driver's commit {'lost' if lost_race else 'never met'} the race")
    # The commit lands first: an abort after it is refused and changes nothing.
    assert main(["abort", path, "--query", "raced", "--batch", "1", "--yes"]) == 1
    assert journal_ids(spark, path) == list(range(200))
