"""The fuzzer as a test: every target runs from its seed corpus for a while
(tests/fuzz/run.py) and must report no finding after doing real work.

Default suite: 3 s per target (about 30 s: the harness and every target work;
CI's long run below does the fuzzing). The long run is marked slow:
SPARKJOURNAL_FUZZ_SECONDS per target (default 300). The C target (cscan) runs
where clang is installed and is reported as skipped elsewhere; the JVM
targets (jvm_lane, jvm_log, jvm_page: the Java readers beside Python's) where
a JDK builds the connector's jar.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("atheris", reason="atheris (the test extra) runs the fuzz targets")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Executions each target must at least reach in its time (a few times below what
# a loaded 2-core machine does), so a target that silently stopped early fails.
# The JVM targets (measured 600/s jvm_lane, 1,000/s jvm_log beside a CI run;
# jvm_page 2,200/s alone, its JVM loading Spark's Parquet reader first) pay the
# JVM's start and warm-up inside their time too.
MIN_EXECS_PER_SECOND = {"records": 20, "header": 200, "loader": 3, "sidecars": 20, "cscan": 100,
                        "jvm_lane": 50, "jvm_log": 50, "jvm_page": 20}
SKIPPABLE = ("cscan", "jvm_lane", "jvm_log", "jvm_page")    # without clang; without a JDK
SHORT_SECONDS = 3


def fuzz(tmp_path, seconds: int) -> tuple[subprocess.CompletedProcess, list]:
    report = tmp_path / "outcomes.json"
    result = subprocess.run([sys.executable, "-m", "tests.fuzz.run", "--seconds", str(seconds),
                             "--work", str(tmp_path / "work"), "--json", str(report)],
                            cwd=REPO, capture_output=True, text=True,
                            timeout=seconds * len(MIN_EXECS_PER_SECOND) * 3 + 600)
    return result, json.loads(report.read_text()) if report.exists() else []


def check_no_finding(result, outcomes, seconds: int) -> None:
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(o["target"] for o in outcomes) == sorted(MIN_EXECS_PER_SECOND)
    for outcome in outcomes:
        if outcome["skipped"]:
            assert outcome["target"] in SKIPPABLE, outcome
            continue
        assert outcome["findings"] == [] and outcome["exit_code"] == 0, outcome
        assert outcome["executions"] >= MIN_EXECS_PER_SECOND[outcome["target"]] * seconds, outcome
        assert outcome["coverage"] > 0, outcome
    assert "0 findings" in result.stdout and "FAILED" not in result.stdout, result.stdout


def test_every_fuzz_target_runs_its_corpus_and_mutations_without_a_finding(tmp_path):
    result, outcomes = fuzz(tmp_path, SHORT_SECONDS)
    check_no_finding(result, outcomes, SHORT_SECONDS)


@pytest.mark.slow
def test_long_fuzz_run_finds_nothing(tmp_path):
    seconds = int(os.environ.get("SPARKJOURNAL_FUZZ_SECONDS", "300"))
    result, outcomes = fuzz(tmp_path, seconds)
    print(result.stdout)
    check_no_finding(result, outcomes, seconds)
