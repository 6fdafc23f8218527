"""jobs/replay.py run by spark-submit on a journal written here: the output holds
exactly the journal's events, the summary counts them, and failures exit
non-zero with the reason."""
from __future__ import annotations

import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

pyspark = pytest.importorskip("pyspark")

from sparkjournal import JournalSink, read_table  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(REPO, "jobs", "replay.py")
SPARK_SUBMIT = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")


def replay(*args, timeout=600):
    """Runs the job under spark-submit, which passes the Python driver's stderr
    on to its own stdout: the job's messages, errors included, are in stdout."""
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")]))}
    return subprocess.run([SPARK_SUBMIT, "--master", "local[2]", "--conf", "spark.ui.enabled=false",
                           JOB, *args], capture_output=True, text=True, env=env, timeout=timeout)


def micros(column) -> list[int]:
    """Timestamps as UTC microseconds (Spark writes parquet INT96, read back as
    naive nanoseconds; the journal holds zoned microseconds)."""
    return column.cast(pa.timestamp("us")).cast(pa.int64()).to_pylist()


def replay_without_spark_submit(*args):
    """The job's argument checks run before Spark starts: plain python suffices."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, JOB, *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.fixture(scope="module")
def journal(spark, tmp_path_factory):
    """A journal of two batches (600 + 300 events, the second with a column the
    first predates), replayed once into parquet with a summary."""
    folder = tmp_path_factory.mktemp("replay")
    path, output = str(folder / "journal"), str(folder / "out")
    sink = JournalSink(path, txnAppId="replay")
    events = "id", "cast(id as string) as key", "timestamp_micros(id) as ts"
    sink(spark.range(0, 600, numPartitions=2).selectExpr(*events), 0)
    sink(spark.range(600, 900, numPartitions=2).selectExpr(*events, "if(id >= 0, 'late' || id, null) as note"), 1)
    run = replay("--path", path, "--output", output, "--summary")
    return path, output, run


def test_replay_writes_exactly_the_journals_events_as_parquet(journal):
    path, output, run = journal
    assert run.returncode == 0, run.stdout[-3000:]
    assert f"wrote the events of journal {path} to {output} (parquet, mode errorifexists)" in run.stdout
    written = pq.read_table(output).sort_by("id")
    assert written.column_names == ["id", "key", "ts", "note", "_batch_id", "_commit_time",
                                    "_host", "_lane", "_record_id", "_row"]
    held = read_table(path).sort_by("id")
    for column in ("id", "key", "note"):
        assert written.column(column).to_pylist() == held.column(column).to_pylist(), column
    assert micros(written.column("ts")) == micros(held.column("ts"))
    assert written.column("_batch_id").to_pylist() == [0] * 600 + [1] * 300


def test_replay_summary_counts_events_batches_and_lanes(journal):
    path, _output, run = journal
    assert run.returncode == 0, run.stdout[-3000:]
    lanes = sorted(d for d in os.listdir(path) if d.startswith("lane-"))
    assert f"journal {path}: 900 events, 2 distinct batch ids, {len(lanes)} lanes, hosts " in run.stdout
    counted = [line.strip() for line in run.stdout.splitlines() if line.startswith("  ")]
    assert [line.split(" (node ")[0] for line in counted] == [os.path.join(path, d) for d in lanes]
    assert sum(int(line.rsplit(": ", 1)[1].split()[0]) for line in counted) == 900
    assert "commit times: first " in run.stdout


def test_replay_into_an_existing_output_fails_naming_it(journal):
    path, output, _run = journal
    again = replay("--path", path, "--output", output)
    assert again.returncode == 1
    assert "replay.py: error:" in again.stdout and output in again.stdout
    assert "already exists" in again.stdout


def test_replay_with_nothing_to_do_or_a_bad_mode_exits_2_before_reading(tmp_path):
    idle = replay("--path", str(tmp_path))
    assert idle.returncode == 2
    assert "nothing to do: give --output DIR to write the events, --summary" in idle.stdout
    missing = replay_without_spark_submit("--path", str(tmp_path / "absent"), "--summary")
    assert missing.returncode == 2 and f"--path {tmp_path / 'absent'}: no such directory" in missing.stderr
    bad_mode = replay_without_spark_submit("--path", str(tmp_path), "--output", str(tmp_path / "o"),
                                           "--mode", "sideways")
    assert bad_mode.returncode == 2 and "argument --mode: invalid choice: 'sideways'" in bad_mode.stderr
    assert not (tmp_path / "o").exists()
