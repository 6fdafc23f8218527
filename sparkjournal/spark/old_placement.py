"""The jar sparkjournal 0.1's first import placed in the installed pyspark's
``jars/`` folder (``sparkjournal-jvm.jar``, and a ``.sparkjournal-jvm-partial-*``
copy a killed placement left). Nothing places it any more (connector.py ships
the jar with each session); ``sparkjournal jvm --remove`` takes an old one out,
since ``pip uninstall`` cannot: the folder is pyspark's. While it is there,
every session of that pyspark loads that old connector first."""
from __future__ import annotations

import os

from .jvm_build import pyspark_jars_folder as jars_folder  # noqa: F401 - the folder in question

NAME = "sparkjournal-jvm.jar"
PARTIAL = ".sparkjournal-jvm-partial"


def placed(folder: str | None = None) -> list[str]:
    """The names of what an earlier version placed in ``folder`` (pyspark's jars/)."""
    folder = folder or jars_folder()
    if not os.path.isdir(folder):
        return []
    return [name for name in sorted(os.listdir(folder)) if name == NAME or name.startswith(PARTIAL)]


def remove(folder: str | None = None) -> list[str]:
    """Removes them; returns the names removed."""
    folder = folder or jars_folder()
    removed = placed(folder)
    for name in removed:
        os.unlink(os.path.join(folder, name))
    return removed
