"""format("sparkjournal") is found with no register call and no flag: PySpark
scans sys.path for top-level ``pyspark_*`` modules, and both ``pip install .``
and ``pip install -e .`` (pyproject.toml's package-dir) put
``pyspark_sparkjournal`` where that scan looks; and the JVM connector, once
placed in pyspark's jars/ folder (jvm_install.py, on the first import of the
Spark layer), is on the classpath of every session started after, so a plain
``SparkSession.builder`` reads through it and writes through the Python
source. Proven from a fresh interpreter whose working folder is outside the
checkout and which never imports sparkjournal, so nothing is found through
the current folder or a call of ours."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sparkjournal.spark import jvm_build, jvm_install

pytest.importorskip("pyspark")

DRIVER = """
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.pyspark.python", sys.executable).getOrCreate())
spark.range(3).selectExpr("id", "cast(id as string) as key").write.format("sparkjournal") \\
    .mode("append").save("journal")
read = spark.read.format("sparkjournal").load("journal")
print("READ", sorted(r.id for r in read.collect()))
print("JVM SCAN", "BatchScan sparkjournal" in read._jdf.queryExecution().executedPlan().toString())
"""


def test_format_found_without_register_from_a_driver_outside_the_checkout(tmp_path):
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assert not str(tmp_path).startswith(checkout)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", DRIVER], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "READ [0, 1, 2]" in result.stdout
    assert "DATA_SOURCE_NOT_FOUND" not in result.stderr
    assert "replaced a statically registered data source" not in result.stderr


def test_plain_session_reads_through_the_jvm_connector_with_no_flag(tmp_path):
    if jvm_install.ensure() is None:
        pytest.skip(f"no JVM connector here: {jvm_build.jvm_unavailable()}")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", DRIVER], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "READ [0, 1, 2]" in result.stdout and "JVM SCAN True" in result.stdout


def test_without_a_jdk_the_python_source_stays_and_one_warning_says_what_is_lost(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JAVA_HOME")}
    env.update(PATH=os.path.dirname(sys.executable), SPARKJOURNAL_JVM_CACHE=str(tmp_path / "cache"))
    before = jvm_install.installed()
    code = ("import logging; logging.basicConfig(); import sparkjournal.spark; "
            "from sparkjournal.spark import jvm_install; jvm_install.ensure(); "
            "print('PLACED', jvm_install.ensure())")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "PLACED None" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "JVM connector is not loaded" in line]
    assert len(warnings) == 1, result.stderr
    assert "no javac" in warnings[0] and "without column pruning" in warnings[0]
    assert "sparkjournal.read(spark, path)" in warnings[0]
    assert jvm_install.installed() == before          # a failed build removes nothing
