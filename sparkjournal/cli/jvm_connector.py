"""``sparkjournal jar``, ``sparkjournal job NAME`` and ``sparkjournal jvm
[--remove]``: where the JVM connector's jar and the spark-submit jobs are, and
taking out a jar an earlier version placed in pyspark's ``jars/`` folder.

Nothing here changes a Spark installation but ``--remove``, which only
deletes what sparkjournal itself once put there (spark/old_placement.py).
"""
from __future__ import annotations

import os

from ..errors import SparkJournalError, UsageError

# The jobs a wheel carries in sparkjournal/jobs (setup.py); a checkout's are in <repo>/jobs.
JOBS = ("stream_events", "compact", "page", "replay")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def print_jar(_args) -> int:
    from ..spark import connector, jvm_build
    try:
        print(connector.jar_path())
    except jvm_build.JvmUnavailableError as error:
        raise SparkJournalError(f"no JVM connector jar here: {error}") from None
    return 0


def job_path(name: str) -> str:
    """The installed (or checked-out) file of the job ``name``."""
    if name.endswith(".py"):
        name = name[:-3]
    if name not in JOBS:
        raise UsageError(f"no job {name!r}: the jobs are {', '.join(JOBS)}")
    for folder in (os.path.join(_PACKAGE, "jobs"), os.path.join(os.path.dirname(_PACKAGE), "jobs")):
        path = os.path.join(folder, f"{name}.py")
        if os.path.isfile(path):
            return path
    raise SparkJournalError(f"the job {name} is not installed with this sparkjournal "
                            f"({_PACKAGE}): reinstall it with pip")


def print_job(args) -> int:
    print(job_path(args.name))
    return 0


def run(args) -> int:
    from ..spark import connector, jvm_build, old_placement
    folder = old_placement.jars_folder()
    if args.remove:
        removed = old_placement.remove(folder)
        print(f"removed {', '.join(removed)} from {folder}" if removed
              else f"nothing to remove: no jar of sparkjournal's in {folder}")
        return 0
    try:
        print(f"connector jar: {connector.jar_path()}")
    except jvm_build.JvmUnavailableError as missing:
        print(f"connector jar: none: {missing}")
    left = old_placement.placed(folder)
    print(f"in pyspark's jars folder: {', '.join(left) + ' (an earlier version placed it; every session of this pyspark loads it first: sparkjournal jvm --remove)' if left else 'nothing of sparkjournal'}")
    return 0
