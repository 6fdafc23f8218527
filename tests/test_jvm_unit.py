"""The connector's Java unit tests (every ``*Test`` class under jvm/src/test/java)
pass: io.sparkjournal.TestRunner runs each of their ``public static void test*()``
methods, and every one of them must have run and passed."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

from sparkjournal.spark import jvm_build

from jvm_tools import TEST_SOURCE_DIR, tools_classpath

RUNNER = "io.sparkjournal.TestRunner"
# The golden commit log corpus CommitLogGoldenTest reads (its system property).
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "commit_log")
# The golden lane corpus LaneGoldenTest reads (its system property).
GOLDEN_LANES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "lanes")
TEST_METHOD = re.compile(r"^\s*public\s+static\s+void\s+(test\w*)\s*\(\s*\)", re.MULTILINE)


def java_test_classes() -> dict[str, int]:
    """{class name: number of test methods} of every *Test.java under jvm/src/test/java."""
    found = {}
    for where, _dirs, names in os.walk(TEST_SOURCE_DIR):
        for name in sorted(names):
            if name.endswith("Test.java"):
                path = os.path.join(where, name)
                with open(path, encoding="utf-8") as source:
                    tests = len(TEST_METHOD.findall(source.read()))
                relative = os.path.relpath(path, TEST_SOURCE_DIR)[:-len(".java")]
                found[relative.replace(os.sep, ".")] = tests
    return dict(sorted(found.items()))


def test_every_java_unit_test_passes():
    reason = jvm_build.jvm_unavailable()
    if reason:
        pytest.skip(f"the JVM connector cannot be built: {reason}")
    classes = java_test_classes()
    assert classes and all(classes.values()), f"no tests found in {TEST_SOURCE_DIR}: {classes}"
    spark_jars = jvm_build._pyspark_jars()[1]
    classpath = os.pathsep.join([tools_classpath(), os.path.join(spark_jars, "*")])
    done = subprocess.run([jvm_build.java_path(), "--add-opens=java.base/java.nio=ALL-UNNAMED",
                           f"-Dsparkjournal.golden={GOLDEN}", f"-Dsparkjournal.golden.lanes={GOLDEN_LANES}",
                           "-cp", classpath, RUNNER, *classes],
                          capture_output=True, text=True, timeout=300)
    output = f"exit {done.returncode}\n{done.stdout}{done.stderr}"
    assert done.returncode == 0, output
    total = sum(classes.values())
    assert done.stdout.splitlines()[-1] == f"{total} passed, 0 failed", output
