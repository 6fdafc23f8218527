"""jobs/page.py under spark-submit and ``sparkjournal page`` without Spark:
every lane over its limit paged on its node, the report (per lane and totals,
JSON), the visible events unchanged, a second run finding nothing to do,
paging inside ``sparkjournal compact``, and a bad path (bad job arguments:
test_compact_job.py, for both jobs)."""
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
JOB = os.path.join(REPO, "jobs", "page.py")
SPARK_SUBMIT = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
SMALL = ["--option", "fileSize=64k", "--option", "bufferSize=16k", "--option", "pageSizeBytes=40k"]


def env() -> dict:
    return {**os.environ, "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": os.pathsep.join(filter(None, [REPO, os.environ.get("PYTHONPATH")]))}


def ids(path) -> list[int]:
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


@pytest.fixture
def journal(spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", fileSize="64k", bufferSize="16k", laneIdleTimeout="200ms",
                       smallBatchRows=0)                # tasks: several lanes for the job to reach
    for batch in range(4):
        sink(spark.range(batch * 1000, batch * 1000 + 1000, numPartitions=2)
             .selectExpr("id", "repeat('p', 100) as payload"), batch)
    wait_lanes_free([lane for lane, _node in node_lanes(path)])
    return path


def test_the_job_pages_every_lane_over_its_limit_reports_it_and_a_second_run_has_nothing_to_do(
        journal, tmp_path):
    out = str(tmp_path / "report.json")
    run = subprocess.run([SPARK_SUBMIT, "--master", "local[2]", "--conf", "spark.ui.enabled=false",
                          JOB, "--path", journal, "--json", out, "--option", "maxSizeBytes=64k",
                          *SMALL], capture_output=True, text=True, env=env(), timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    totals = json.load(open(out))["totals"]
    assert totals["failed"] == [] and totals["paged_lanes"] >= 1, totals
    assert totals["records_paged"] > 0 and totals["pages_written"] >= 2
    assert totals["paging_bytes_reclaimed"] > 0
    assert totals["page_files_after"] == totals["pages_written"]
    assert f"{totals['paged_lanes']} paged" in run.stdout and "bytes reclaimed" in run.stdout
    assert ids(journal) == list(range(4000))
    again = subprocess.run([SPARK_SUBMIT, "--master", "local[2]", "--conf",
                            "spark.ui.enabled=false", JOB, "--path", journal, "--option",
                            "maxSizeBytes=64k", *SMALL], capture_output=True, text=True,
                           env=env(), timeout=600)
    assert again.returncode == 0 and " 0 paged, 0 records" in again.stdout, again.stdout[-3000:]
    assert ids(journal) == list(range(4000))


def test_the_command_pages_this_node_and_compact_pages_lanes_over_their_limit(journal, tmp_path):
    out = str(tmp_path / "page.json")
    run = subprocess.run([sys.executable, "-m", "sparkjournal", "page", journal, "--force",
                          "--json", out, *SMALL], capture_output=True, text=True, env=env(),
                         timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.load(open(out))
    assert report["totals"]["pages_written"] == report["totals"]["paged_lanes"] >= 1
    for lane in report["lanes"]:
        paging = lane["paging"]
        assert paging["paged"] or "no live events" in paging["reason"], lane
        assert (f"; paged {paging['records_paged']} records" if paging["paged"] else
                "not paged: no live events") in run.stdout, run.stdout
    assert ids(journal) == list(range(4000))
    compact = subprocess.run([sys.executable, "-m", "sparkjournal", "compact", journal, "--json",
                              out, "--option", "maxSizeBytes=64k", *SMALL], capture_output=True,
                             text=True, env=env(), timeout=300)
    assert compact.returncode == 0, compact.stdout[-3000:] + compact.stderr[-3000:]
    assert json.load(open(out))["totals"]["records_paged"] > 0 and "records paged" in compact.stdout
    assert ids(journal) == list(range(4000))


def test_the_command_refuses_a_path_that_is_not_there(tmp_path):
    run = subprocess.run([sys.executable, "-m", "sparkjournal", "page", str(tmp_path / "none")],
                         capture_output=True, text=True, env=env(), timeout=120)
    assert run.returncode == 2 and "does not exist" in run.stderr, run.stderr
