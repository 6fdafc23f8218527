"""The schedules shipped in conf/ (cron line, systemd service) name jobs that
exist and arguments those jobs accept: a nightly run must not fail on a typo."""
from __future__ import annotations

import importlib.util
import pathlib
import re
import shlex

import pytest

pytest.importorskip("pyspark")

from sparkjournal.cli.maintenance_job import MaintenanceJob, parse_args  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
SCHEDULES = [REPO / "conf" / "sparkjournal-maintenance.cron",
             REPO / "conf" / "systemd" / "sparkjournal-maintenance.service"]


def spark_submits(text: str) -> list[list[str]]:
    """Each ``spark-submit ... jobs/X.py args`` in a schedule, as [job, args...]."""
    found = []
    for command in re.findall(r"spark-submit ([^'&]+)", text):
        words = shlex.split(command)
        job = next(i for i, w in enumerate(words) if w.endswith(".py"))
        found.append([words[job].rsplit("/", 1)[1], *words[job + 1:]])
    return found


def job_of(name: str):
    """The MaintenanceJob a jobs/ script runs."""
    spec = importlib.util.spec_from_file_location(f"job_{name[:-3]}", REPO / "jobs" / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    [job] = [value for value in vars(module).values() if isinstance(value, MaintenanceJob)]
    return job


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda p: p.name)
def test_schedule_runs_jobs_that_exist_with_arguments_they_accept(schedule, tmp_path):
    commands = spark_submits(schedule.read_text())
    assert {job for job, *_ in commands} == {"page.py", "compact.py"}
    for job, *args in commands:
        args = [str(tmp_path) if a == "$SPARKJOURNAL_PATH" else
                str(tmp_path / "report.json") if a.endswith(".json") else a for a in args]
        parsed = parse_args(job_of(job), args)          # exits 2 on an argument it refuses
        assert parsed.path == str(tmp_path)
