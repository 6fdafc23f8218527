"""The wheel a pip user gets: built from the checkout as ``pip install .``
builds it, it carries the JVM connector's jar under its versioned name and the
spark-submit jobs, with an abi3 tag; installed into a fresh virtual
environment it runs the main job under ``spark-submit`` from outside the
checkout with the JVM writer and the JVM reader, and neither that nor its
import nor ``pip uninstall`` changes a byte of pyspark's ``jars/``; the
uninstall leaves nothing of sparkjournal behind."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

pytest.importorskip("pyspark")

from sparkjournal.spark import connector  # noqa: E402

from jvm_tools import pyspark_jars_digest  # noqa: E402

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
pytestmark = pytest.mark.slow          # a wheel build, a venv and a spark-submit: ~1 min


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> str:
    if connector.jar_unavailable():
        pytest.skip(f"no JDK to build the wheel's connector: {connector.jar_unavailable()}")
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), CHECKOUT],
                           capture_output=True, text=True, timeout=900)
    if built.returncode != 0 and "Could not find a version" in built.stderr:
        pytest.skip(f"pip cannot fetch the build requirements here: {built.stderr[-500:]}")
    assert built.returncode == 0, built.stderr[-3000:]
    shutil.rmtree(os.path.join(CHECKOUT, "build"), ignore_errors=True)
    (found,) = [str(path) for path in dist.glob("sparkjournal-*.whl")]
    return found


def test_the_wheel_carries_the_versioned_jar_and_the_jobs_with_an_abi3_tag(wheel):
    import pyspark
    assert re.search(r"-cp311-abi3-linux_\w+\.whl$", wheel), wheel
    names = zipfile.ZipFile(wheel).namelist()
    binary = ".".join(pyspark.__version__.split(".")[:2])
    assert f"sparkjournal/jars/sparkjournal-0.1.0-spark{binary}.jar" in names
    assert {f"sparkjournal/jobs/{job}.py" for job in ("stream_events", "compact", "page", "replay")} \
        <= set(names)
    assert not [name for name in names if name.endswith(".java")], "Java sources in the wheel"
    with zipfile.ZipFile(wheel).open(f"sparkjournal/jars/sparkjournal-0.1.0-spark{binary}.jar") as jar:
        inside = zipfile.ZipFile(jar)
        built_for = inside.read("io/sparkjournal/build.properties").decode()
        assert f"spark.version={pyspark.__version__}" in built_for and "sparkjournal.version=0.1.0" in built_for
        assert not [n for n in inside.namelist() if n.endswith(("Tool.class", "Dump.class"))], \
            "test tools in the production jar"


def test_installed_from_the_wheel_the_main_job_runs_with_the_jvm_connector_and_pyspark_is_untouched(
        wheel, tmp_path):
    before = pyspark_jars_digest()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True,
                   timeout=300)
    python, pip = str(venv / "bin" / "python"), [str(venv / "bin" / "python"), "-m", "pip"]
    installed = subprocess.run([*pip, "install", "-q", "--no-deps", wheel], capture_output=True,
                               text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
    env.update(PYSPARK_PYTHON=python, PYSPARK_DRIVER_PYTHON=python)
    where = subprocess.run([str(venv / "bin" / "sparkjournal"), "jar"], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=120)
    assert where.returncode == 0 and where.stdout.strip().startswith(str(venv)), where
    job = subprocess.run([str(venv / "bin" / "sparkjournal"), "job", "stream_events"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert job.returncode == 0 and job.stdout.strip().startswith(str(venv)), job
    submit = shutil.which("spark-submit") or os.path.join(os.path.dirname(sys.executable), "spark-submit")
    ran = subprocess.run([submit, "--master", "local[2]", "--conf", "spark.ui.enabled=false",
                          job.stdout.strip(), "--data", str(tmp_path / "data"), "--rows-per-batch",
                          "20000", "--batches", "1"], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=600)
    said = ran.stdout + ran.stderr
    assert ran.returncode == 0, said[-4000:]
    assert f"added to the running session from {where.stdout.strip()}" in said, said[-4000:]
    assert "writer=jvm (auto" in said and "read back through the JVM connector" in said, said[-4000:]
    assert "every event exactly once" in said
    assert pyspark_jars_digest() == before, "the job or its import wrote into pyspark's jars/"
    removed = subprocess.run([*pip, "uninstall", "-y", "sparkjournal"], capture_output=True,
                             text=True, timeout=300)
    assert removed.returncode == 0, removed.stderr[-3000:]
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    left = [name for name in os.listdir(site) if "sparkjournal" in name]
    assert left == [], f"pip uninstall left {left} in {site}"
    assert pyspark_jars_digest() == before, "pip uninstall changed pyspark's jars/"
