"""jobs/compact.py under spark-submit: every lane maintained on its node, the
report (per lane and totals, JSON), the visible events unchanged but for what
retention expired, a second run finding nothing to do, and bad arguments (of
jobs/page.py too)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pyspark = pytest.importorskip("pyspark")

from sparkjournal import JournalSink, read_table  # noqa: E402
from sparkjournal.events.visible_events import node_lanes  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(REPO, "jobs", "compact.py")
SPARK_SUBMIT = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
SMALL = ["--option", "fileSize=64k", "--option", "bufferSize=16k"]


def env() -> dict:
    return {**os.environ, "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")]))}


def compact_job(*args, timeout=600):
    return subprocess.run([SPARK_SUBMIT, "--master", "local[2]", "--conf", "spark.ui.enabled=false",
                           JOB, *args], capture_output=True, text=True, env=env(), timeout=timeout)


def ids(path) -> list[int]:
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def test_the_job_maintains_every_lane_reports_it_and_a_second_run_has_nothing_to_do(
        spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", fileSize="64k", bufferSize="16k", laneIdleTimeout="200ms",
                       smallBatchRows=0)                # tasks: several lanes for the job to reach
    for batch in range(6):
        sink(spark.range(batch * 500, batch * 500 + 500, numPartitions=2)
             .selectExpr("id", "repeat('p', 300) as payload"), batch)
    lanes = [lane for lane, _node in node_lanes(path)]
    wait_lanes_free(lanes)
    out = str(tmp_path / "report.json")
    run = compact_job("--path", path, "--force", "--json", out, "--option", "retention=60k", *SMALL)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    for lane in lanes:
        assert f"{lane}: swept" in run.stdout, run.stdout[-3000:]
    assert "lanes: " in run.stdout and "bytes reclaimed" in run.stdout
    totals = json.load(open(out))["totals"]
    assert totals["lanes"] == len(lanes) and totals["failed"] == []
    assert totals["records_expired"] > 0 and totals["compacted_lanes"] >= 1, totals
    left = ids(path)
    assert 0 < len(left) < 3000
    again = compact_job("--path", path, "--option", "retention=60k", *SMALL)
    assert again.returncode == 0, again.stdout[-3000:]
    assert ", 0 stored records past retention" in again.stdout and " 0 compacted" in again.stdout
    assert ids(path) == left


@pytest.mark.parametrize("job, args, message", [
    ("compact.py", ["--path", "/no/such/journal"], "no such directory"),
    ("compact.py", ["--option", "retention=7x"], "retention='7x' is not valid"),
    ("compact.py", ["--option", "retention"], "--option takes key=value"),
    ("compact.py", ["--locality-wait", "soon"], "is not a Spark duration"),
    ("page.py", ["--path", "/no/such/journal"], "no such directory"),
    ("page.py", ["--option", "pageSizeBytes=1"], "pageSizeBytes='1' is not valid"),
    ("page.py", ["--option", "maxSizeBytes"], "--option takes key=value"),
])
def test_bad_arguments_exit_2_before_spark_starts(job, args, message, tmp_path):
    run = subprocess.run([sys.executable, os.path.join(REPO, "jobs", job), *args],
                         capture_output=True, text=True, env=env(), cwd=str(tmp_path), timeout=120)
    assert run.returncode == 2 and message in run.stderr, run.stderr
