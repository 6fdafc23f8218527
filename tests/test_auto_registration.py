"""format("sparkjournal") is found with no register call: PySpark scans
sys.path for top-level ``pyspark_*`` modules, and both ``pip install .`` and
``pip install -e .`` (pyproject.toml's package-dir) put ``pyspark_sparkjournal``
where that scan looks. Proven from a fresh interpreter whose working folder is
outside the checkout, so nothing is found through the current folder."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")

DRIVER = """
import sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.pyspark.python", sys.executable).getOrCreate())
spark.range(3).selectExpr("id", "cast(id as string) as key").write.format("sparkjournal") \\
    .mode("append").save("journal")
print("READ", sorted(r.id for r in spark.read.format("sparkjournal").load("journal").collect()))
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
