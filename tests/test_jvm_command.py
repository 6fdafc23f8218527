"""``sparkjournal jvm``: where the JVM connector is, and ``--remove`` taking it
out of pyspark's jars folder, which ``pip uninstall`` cannot do."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sparkjournal.spark import jvm_build, jvm_install


def test_jvm_command_says_the_jar_in_pyspark_is_the_current_build():
    missing = jvm_build.jvm_unavailable()
    if missing:
        pytest.skip(f"no JVM connector here: {missing}")
    jvm_install.install()
    done = subprocess.run([sys.executable, "-m", "sparkjournal", "jvm"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"built from the current sources: {jvm_build.jvm_jar()}" in done.stdout
    placed = os.path.join(jvm_install.jars_folder(), jvm_install.NAME)
    assert f"in pyspark's jars folder: {placed} (the current build)" in done.stdout


def test_uninstall_removes_the_placed_jar_and_partial_copies_and_nothing_of_pyspark(tmp_path):
    for name in (jvm_install.NAME, f"{jvm_install.PARTIAL}-4242", "spark-core_2.13-4.3.0.jar"):
        (tmp_path / name).write_bytes(b"jar")
    assert jvm_install.uninstall(str(tmp_path)) == [f"{jvm_install.PARTIAL}-4242", jvm_install.NAME]
    assert sorted(os.listdir(tmp_path)) == ["spark-core_2.13-4.3.0.jar"]
    assert jvm_install.uninstall(str(tmp_path)) == []
