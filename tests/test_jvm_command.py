"""``sparkjournal jar`` and ``sparkjournal job NAME`` print what spark-submit
needs; ``sparkjournal jvm --remove`` takes out a jar an earlier version placed
in pyspark's jars folder (which ``pip uninstall`` cannot), and nothing of
pyspark's."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sparkjournal.spark import connector, old_placement

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sparkjournal(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sparkjournal", *args], capture_output=True,
                          text=True, timeout=300)


def test_jar_prints_the_connector_jar_for_spark_submit():
    missing = connector.jar_unavailable()
    if missing:
        done = sparkjournal("jar")
        assert done.returncode == 1 and "no JVM connector jar here" in done.stderr
        pytest.skip(f"no JVM connector here: {missing}")
    done = sparkjournal("jar")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == connector.jar_path() and os.path.isfile(done.stdout.strip())


def test_job_prints_each_job_and_refuses_an_unknown_one_naming_them():
    for name in ("stream_events", "compact", "page", "replay"):
        done = sparkjournal("job", name)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == os.path.join(REPO, "jobs", f"{name}.py")
    done = sparkjournal("job", "nightly")
    assert done.returncode == 2 and "no job 'nightly'" in done.stderr and "compact" in done.stderr


def test_remove_takes_out_what_an_earlier_version_placed_and_nothing_of_pyspark(tmp_path):
    for name in (old_placement.NAME, f"{old_placement.PARTIAL}-4242", "spark-core_2.13-4.3.0.jar"):
        (tmp_path / name).write_bytes(b"jar")
    assert old_placement.remove(str(tmp_path)) == [f"{old_placement.PARTIAL}-4242", old_placement.NAME]
    assert sorted(os.listdir(tmp_path)) == ["spark-core_2.13-4.3.0.jar"]
    assert old_placement.remove(str(tmp_path)) == []


def test_jvm_remove_leaves_pyspark_holding_nothing_of_sparkjournal_and_jvm_says_so():
    removed = sparkjournal("jvm", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.startswith(("removed ", "nothing to remove: "))
    done = sparkjournal("jvm")
    assert done.returncode == 0, done.stderr
    assert "connector jar: " in done.stdout
    assert "in pyspark's jars folder: nothing of sparkjournal" in done.stdout
