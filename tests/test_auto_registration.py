"""format("sparkjournal") without a register call, and the JVM connector the
ecosystem's way (spark/connector.py): nothing is placed in pyspark.

PySpark scans sys.path for top-level ``pyspark_*`` modules, and both ``pip
install .`` and ``pip install -e .`` (pyproject.toml's package-dir) put
``pyspark_sparkjournal`` where that scan looks, so a plain session reads and
writes through the Python source. A session started without the JVM connector
(``sparkjournal.configure(builder)`` gives it one from its start, as the test
suite's own session is started) takes it at its first sparkjournal call (here
``sparkjournal.register``), and configure keeps the jars a session would ship
anyway. Proven from
fresh interpreters whose working folder is outside the checkout, and with
pyspark's own ``jars/`` folder checked unchanged."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sparkjournal.spark import connector

from jvm_tools import pyspark_jars_digest

pytest.importorskip("pyspark")

SESSION = """
import sys
from pyspark.sql import SparkSession
builder = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
           .config("spark.pyspark.python", sys.executable))
"""
READ_BACK = """
spark.range(3).selectExpr("id", "cast(id as string) as key").write.format("sparkjournal") \\
    .mode("append").save("journal")
def read(label):
    frame = spark.read.format("sparkjournal").load("journal")
    print(label, "READ", sorted(r.id for r in frame.collect()))
    scans = [line for line in frame._jdf.queryExecution().executedPlan().toString().splitlines()
             if "BatchScan sparkjournal" in line]
    print(label, "JVM SCAN", bool(scans) and "(Python)" not in scans[0])
"""
PLAIN = SESSION + "spark = builder.getOrCreate()\n" + READ_BACK + """
read("before")
import sparkjournal
sparkjournal.register(spark)                    # the first sparkjournal call on the session
read("after")
print("SHIPPED", spark.sparkContext._jsc.sc().listJars())
"""



def run_driver(code: str, cwd) -> str:
    checkout = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    assert not str(cwd).startswith(checkout)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "DATA_SOURCE_NOT_FOUND" not in result.stderr
    assert "replaced a statically registered data source" not in result.stderr
    return result.stdout


def test_a_running_session_takes_the_connector_at_its_first_sparkjournal_call(tmp_path):
    before = pyspark_jars_digest()
    said = run_driver(PLAIN, tmp_path)
    assert "before READ [0, 1, 2]" in said and "before JVM SCAN False" in said
    if connector.jar_unavailable():
        assert "after JVM SCAN False" in said
        pytest.skip(f"no JVM connector here: {connector.jar_unavailable()}")
    assert "after READ [0, 1, 2]" in said and "after JVM SCAN True" in said, said
    assert os.path.basename(connector.jar_path()) in said.split("SHIPPED", 1)[1]
    assert pyspark_jars_digest() == before, "something was written into pyspark's jars/"


def test_without_a_jdk_the_session_is_left_as_it_is_and_one_warning_says_what_is_lost(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JAVA_HOME")}
    env.update(PATH=os.path.dirname(sys.executable), SPARKJOURNAL_JVM_CACHE=str(tmp_path / "cache"))
    code = ("import logging; logging.basicConfig()\n"
            "from pyspark.sql import SparkSession\n"
            "from sparkjournal.spark import connector\n"
            "builder = connector.configure(SparkSession.builder)\n"
            "builder = connector.configure(builder)\n"
            "print('JARS', getattr(builder, '_options', {}).get('spark.jars'))")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "JARS None" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "JVM connector is not loaded" in line]
    assert len(warnings) == 1, result.stderr
    assert "no javac" in warnings[0] and "without column pruning" in warnings[0]
    assert "sparkjournal.read(spark, path)" in warnings[0]


def test_configure_keeps_the_jars_the_session_would_ship_without_it(tmp_path):
    if connector.jar_unavailable():
        pytest.skip(f"no JVM connector here: {connector.jar_unavailable()}")
    code = ("from pyspark.sql import SparkSession\n"
            "import sparkjournal\n"
            "builder = sparkjournal.configure(SparkSession.builder.config('spark.jars', '/opt/a.jar'))\n"
            "print('BUILDER', builder._options['spark.jars'])\n"
            "builder._options.pop('spark.jars')\n"
            "print('SUBMIT', sparkjournal.configure(SparkSession.builder)._options['spark.jars'])\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYSPARK_SUBMIT_ARGS"] = "--master local[1] --jars /opt/b.jar,/opt/c.jar pyspark-shell"
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    jar = connector.jar_path()
    assert f"BUILDER /opt/a.jar,{jar}" in result.stdout
    assert f"SUBMIT /opt/b.jar,/opt/c.jar,{jar}" in result.stdout
