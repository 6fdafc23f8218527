"""``sparkjournal jvm [--remove]``: where the JVM connector is, and taking it
out of pyspark.

The connector's jar is placed in the installed pyspark's ``jars/`` folder by
the first driver that imports sparkjournal's Spark layer (spark/jvm_install.py).
That folder is pyspark's, so ``pip uninstall sparkjournal`` cannot remove it:
``sparkjournal jvm --remove`` does, before or after uninstalling. Without
``--remove`` it says whether a JDK is there, which jar the current sources
build and whether the one in pyspark's folder is that one.

This command never places the jar itself: it sets ``SPARKJOURNAL_JVM=off``
for its own process before importing the Spark layer.
"""
from __future__ import annotations

import os


def run(args) -> int:
    os.environ["SPARKJOURNAL_JVM"] = "off"            # spark/jvm_install.py ENV: do not place it here
    from ..spark import jvm_build, jvm_install
    placed = os.path.join(jvm_install.jars_folder(), jvm_install.NAME)
    if args.remove:
        removed = jvm_install.uninstall()
        print(f"removed {', '.join(removed)} from {jvm_install.jars_folder()}; a driver that "
              f"imports sparkjournal.spark places it again unless SPARKJOURNAL_JVM=off" if removed
              else f"nothing to remove: {placed} is not there")
        return 0
    missing = jvm_build.jvm_unavailable()
    built = None if missing else jvm_build.jvm_jar()
    print(f"built from the current sources: {built or 'no: ' + missing}")
    if not os.path.isfile(placed):
        state = "absent: the next driver that imports sparkjournal.spark places it"
    elif built and jvm_install.same_file(built, placed):
        state = "the current build"
    else:
        state = "an older build: the next driver that imports sparkjournal.spark replaces it"
    print(f"in pyspark's jars folder: {placed} ({state})")
    return 0

