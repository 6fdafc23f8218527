"""``pip install .`` (not editable) carries the JVM connector's sources, so an
installed copy builds the same connector at first use as a checkout does: the
package holds jvm/src/main as sparkjournal/spark/jvm_sources (setup.py), and
jvm_build finds them there and keys them exactly as the checkout's."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("pyspark")

from sparkjournal.spark import jvm_build  # noqa: E402

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBE = """
import json, os
from sparkjournal.spark import jvm_build
sources = jvm_build.java_sources()
print(json.dumps({"module": jvm_build.__file__, "source_dir": jvm_build.SOURCE_DIR,
                  "sources": [os.path.relpath(p, jvm_build.SOURCE_DIR) for p in sources],
                  "key": jvm_build.source_key(sources, "probe", jvm_build.jar_resources())}))
"""


def test_a_non_editable_install_carries_the_connector_sources_and_keys_them_alike(tmp_path):
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                                "--target", str(target), CHECKOUT],
                               capture_output=True, text=True, timeout=600)
    if installed.returncode != 0 and "Could not find a version" in installed.stderr:
        pytest.skip(f"pip cannot fetch the build requirements here: {installed.stderr[-500:]}")
    assert installed.returncode == 0, installed.stderr[-3000:]
    packaged = target / "sparkjournal" / "spark" / "jvm_sources"
    assert (packaged / "java" / "io" / "sparkjournal" / "spark" / "JournalProvider.java").is_file()
    assert (packaged / "resources" / "META-INF" / "services"
            / "org.apache.spark.sql.sources.DataSourceRegister").is_file()
    env = dict(os.environ, PYTHONPATH=str(target), SPARKJOURNAL_JVM="off")
    probe = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr[-3000:]
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    assert found["module"].startswith(str(target)) and found["source_dir"].startswith(str(packaged))
    checkout_sources = jvm_build.java_sources()
    assert found["sources"] == [os.path.relpath(p, jvm_build.SOURCE_DIR) for p in checkout_sources]
    assert found["key"] == jvm_build.source_key(checkout_sources, "probe", jvm_build.jar_resources())
