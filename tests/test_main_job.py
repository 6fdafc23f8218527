"""The README's first command runs jobs/stream_events.py with spark-submit (no
--jars): it lands generated events exactly once and, run again from its
checkpoint, lands more without landing any twice; where a JDK is present its
first sparkjournal call gives the running session the JVM connector, so JVM
tasks write and the JVM connector reads back, and its log says both."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")

from sparkjournal.spark import connector  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JOB = os.path.join(REPO, "jobs", "stream_events.py")


def spark_submit(data: str, batches: int) -> str:
    submit = shutil.which("spark-submit") or os.path.join(os.path.dirname(sys.executable), "spark-submit")
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run([submit, "--master", "local[2]", "--conf", "spark.ui.enabled=false", JOB,
                           "--data", data, "--rows-per-batch", "200", "--batches", str(batches)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    if connector.jar_unavailable() is None:
        assert "writer=jvm (auto" in done.stdout, done.stdout[-3000:]
        assert "read back through the JVM connector" in done.stdout, done.stdout[-3000:]
    return done.stdout


def test_main_job_lands_events_once_and_continues_from_its_checkpoint(tmp_path):
    data = str(tmp_path / "data")
    first = spark_submit(data, batches=2)
    found = re.search(r"(\d+) events, (\d+) distinct ids \(every event exactly once\)", first)
    assert found, first
    events = int(found.group(1))
    assert events >= 400 and events % 200 == 0
    second = spark_submit(data, batches=2)
    again = re.search(r"(\d+) events, (\d+) distinct ids \(every event exactly once\)", second)
    assert again, second
    assert int(again.group(1)) >= events + 400, "the second run continued from its checkpoint"
