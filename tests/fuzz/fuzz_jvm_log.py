"""Fuzz target: the JVM's commit log reader (CommitLog.view: entries and their
attempts, checkpoints, LOG_ID, commit-time segments; CommittedLane) on a
mutated commit log, beside Python's (LogState, committed_lanes).

The input is a folder image (folder_image.py); run.py makes the seeds from
the golden corpus's logs (tests/golden/commit_log/*/log), so the mutations
start from every case there, damaged ones included. What is read: each
query's last committed batch with its commit time, and every committed lane.
Java's answer must be "ok" or a refusal with an IOException (jvm_driver.py); a
refusal by one side only, or different answers, is a finding too: the spec
gives every log one reading. Python may raise its own errors, or OSError where a mutated
name left a folder where a file is looked for.
"""
from __future__ import annotations

import logging
import os

from tests.fuzz.common import allowed, atheris, run, temp_dir
from tests.fuzz.folder_image import write_folder
from tests.fuzz.jvm_driver import compare, driver, nullable, python_outcome

with atheris.instrument_imports(include=["sparkjournal"]):
    from sparkjournal.events.committed_lanes import committed_lanes
    from sparkjournal.events.log_state import LogState

logging.disable(logging.CRITICAL)        # the readers' warnings on damaged files: noise here
ALLOWED = allowed(OSError)


def log_digest(folder: str) -> list[str]:
    state = LogState(folder)
    view = state.view(refresh=True)
    digest = []
    for query in view.queries():
        last = view.last_committed(query)
        at = state.committed_at_ms(query, last) if last >= 0 else None
        digest.append(f"last:{query}={last}@{nullable(at)}")
    for lane in committed_lanes(state).values():
        digest.append(f"lane:{lane.node}|{lane.lane}|{nullable(lane.host)}|{nullable(lane.root)}"
                      f"|{lane.batches}|{lane.node_batches}")
    return digest


def test_one_input(data: bytes) -> None:
    if not data:
        return
    with temp_dir("sj-fuzz-jlog-") as base:
        folder = os.path.join(base, "log")
        os.makedirs(folder)
        write_folder(data, folder)
        python = python_outcome(lambda: log_digest(folder), ALLOWED)
        java = driver().ask("log", folder)
        compare("jvm_log", python, java)


if __name__ == "__main__":
    run(test_one_input)
