"""The Python reader gives the golden commit log corpus's answers
(tests/golden/commit_log/, written by its generate.py): for every case, each
outcome, "done", commit time, committed lane and last decided batch its
expected.json lists, through LogState and committed_lanes; a failing case
raises its error's class naming the file. Each case's log is read from a
copy: the checked-in files are never opened for writing."""
from __future__ import annotations

import json
import logging
import os
import shutil

import pytest

from sparkjournal.errors import FormatVersionError
from sparkjournal.events.commit_log import TxRef
from sparkjournal.events.commit_times import CommitTimesDamage
from sparkjournal.events.committed_lanes import committed_lanes, forgotten_events
from sparkjournal.events.log_checkpoint import CheckpointDamage
from sparkjournal.events.log_state import LogState

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "commit_log")
CASES = sorted(name for name in os.listdir(GOLDEN) if os.path.isdir(os.path.join(GOLDEN, name)))
ERRORS = {"format-version": FormatVersionError, "damaged-checkpoint": CheckpointDamage,
          "damaged-times": CommitTimesDamage}


def expected_of(case: str) -> dict:
    with open(os.path.join(GOLDEN, case, "expected.json"), encoding="utf-8") as handle:
        return json.load(handle)


def copied(case: str, tmp_path) -> str:
    """The case's log copied under tmp_path: the path a reader opens."""
    target = str(tmp_path / "log")
    shutil.copytree(os.path.join(GOLDEN, case, "log"), target)
    return target


def answers(state: LogState, expected: dict) -> dict:
    """Python's answers to the questions expected.json asks (its error aside)."""
    found = {}
    if "outcomes" in expected:
        found["outcomes"] = [
            {**asked, "outcome": state.outcome(asked["query"], asked["batch"],
                                               TxRef(asked["node"], asked["lane"], asked["tx"]),
                                               asked.get("epoch", 0))}
            for asked in expected["outcomes"]]
    if "write_epochs" in expected:
        found["write_epochs"] = [
            {**asked, "write_epoch": state.write_epoch(asked["query"], asked["batch"])}
            for asked in expected["write_epochs"]]
    if "done" in expected:
        found["done"] = [{**asked, "done": state.done(asked["query"], asked["batch"])}
                         for asked in expected["done"]]
    if "committed_at_ms" in expected:
        found["committed_at_ms"] = [
            {**asked, "committed_at_ms": state.committed_at_ms(asked["query"], asked["batch"])}
            for asked in expected["committed_at_ms"]]
    if "lanes" in expected:
        found["lanes"] = [{"node": lane.node, "lane": lane.lane, "host": lane.host,
                           "root": lane.root, "batches": lane.batches,
                           "node_batches": lane.node_batches}
                          for _key, lane in sorted(committed_lanes(state).items())]
    if "forgotten" in expected:
        lost = forgotten_events(state.view(refresh=True))
        found["forgotten"] = {"nodes": list(lost.nodes), "batches": lost.batches,
                              "events": lost.events}
    if "last_decided" in expected:
        view = state.view(refresh=True)
        found["last_decided"] = {query: view.last_committed(query) for query in view.queries()}
    return found


def test_the_corpus_holds_every_case_and_every_outcome_rule():
    assert {"plain", "checkpointed", "damaged-newest", "damaged-both", "newer-format",
            "damaged-times", "aborted", "forgotten"} <= set(CASES)
    rules = {asked["rule"] for case in CASES for asked in expected_of(case).get("outcomes", [])}
    assert rules == {1, 2, 3, 4, 5}


@pytest.mark.parametrize("case", CASES)
def test_python_gives_every_answer_of_the_golden_case(case, tmp_path):
    expected = expected_of(case)
    expected.pop("error", None)
    state = LogState(copied(case, tmp_path))
    assert answers(state, expected) == expected


@pytest.mark.parametrize("case", [case for case in CASES if "error" in expected_of(case)])
def test_python_fails_the_golden_case_with_its_error_naming_the_file(case, tmp_path):
    error = expected_of(case)["error"]
    state = LogState(copied(case, tmp_path))
    with pytest.raises(ERRORS[error["kind"]]) as raised:
        if error["answer"] == "view":
            state.view(refresh=True)
        else:
            assert error["answer"] == "committed_at_ms", error
            state.committed_at_ms(error["query"], error["batch"])
    assert error["names"] in str(raised.value)
    if error["answer"] == "view":
        with pytest.raises(ERRORS[error["kind"]]):
            committed_lanes(LogState(copied(case, tmp_path / "again")))


def test_python_reports_the_damaged_newest_checkpoint_naming_it(tmp_path, caplog):
    state = LogState(copied("damaged-newest", tmp_path))
    with caplog.at_level(logging.WARNING, logger="sparkjournal.commitlog"):
        view = state.view(refresh=True)
    assert view.checkpoint.seq == 0
    assert f"_checkpoints/{1:020d}.json" in caplog.text
