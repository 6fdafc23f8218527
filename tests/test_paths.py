"""Paths cannot lead out of the journal: options naming folders (archiveDirectory,
the commit log under the root) and the folders sparkjournal names itself
(lanes, large/, attic/, requests/ and request files) are refused, naming what
and where, when ``..``, an absolute path or a symbolic link leads outside; and
nothing is written outside."""
from __future__ import annotations

import os

import pytest

from sparkjournal import Journal
from sparkjournal.errors import ConfigError
from sparkjournal.events.requests import pending, submit
from sparkjournal.journal.inside import PathOutsideError
from sparkjournal.journal.root import JournalRoot
from sparkjournal.maintenance.compactor import compact_lane
from sparkjournal.spark.committer import BatchCommitter

OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


@pytest.fixture
def outside(tmp_path):
    """A folder outside every journal of the test; must stay empty."""
    path = tmp_path / "elsewhere"
    path.mkdir()
    yield str(path)
    assert os.listdir(path) == [], "sparkjournal wrote outside the journal"


def fill(lane: str, count: int = 200, **options) -> None:
    with Journal.open(lane, **{**OPTIONS, **options}) as journal:
        for record_id in range(1, count):
            journal.append_add(record_id, bytes(1000), user_type=1, sync=False)
        for record_id in range(1, count, 2):
            journal.append_delete(record_id, sync=False)


def refused(caught, what: str, path: str) -> str:
    message = str(caught.value)
    assert caught.value.what == what and what in message and path in message, message
    return message


@pytest.mark.parametrize("value", ["../elsewhere", "/tmp/elsewhere", "a/../../elsewhere"])
def test_archive_directory_with_dots_or_absolute_is_refused_as_an_option(lane, value):
    with pytest.raises(ConfigError) as caught:
        Journal.open(lane, archive="true", archiveDirectory=value, **OPTIONS)
    assert caught.value.key == "archiveDirectory" and repr(value) in str(caught.value)
    assert "without '..'" in str(caught.value)
    assert not os.path.exists(lane)


def test_archive_directory_that_is_a_link_out_is_refused_by_writer_and_compaction(lane, outside):
    fill(lane)
    os.symlink(outside, os.path.join(lane, "archive"))
    with pytest.raises(PathOutsideError) as caught:
        Journal.open(lane, archive="true", **OPTIONS)
    message = refused(caught, "archiveDirectory", "archive")
    assert "through a symbolic link" in message and outside in message
    with pytest.raises(PathOutsideError):
        compact_lane(lane, force=True, archive="true", **OPTIONS)
    fill(lane, 3)                                    # without archive the lane still works


def test_a_lane_that_is_a_link_is_refused(tmp_path, outside):
    root = str(tmp_path / "root")
    os.makedirs(root)
    os.symlink(outside, os.path.join(root, "lane-000"))
    with pytest.raises(PathOutsideError) as caught:
        JournalRoot(root, **OPTIONS).open_writer()
    assert "is a symbolic link" in refused(caught, "lane", "lane-000")
    with pytest.raises(PathOutsideError):
        JournalRoot(root, **OPTIONS).lanes()


@pytest.mark.parametrize("folder,what", [("large", "the large records folder"),
                                         ("requests", "the lane requests folder")])
def test_lane_folders_that_link_out_are_refused(lane, outside, folder, what):
    fill(lane, 3)
    if os.path.isdir(os.path.join(lane, folder)):
        os.rmdir(os.path.join(lane, folder))                   # empty: no large records
    os.symlink(outside, os.path.join(lane, folder))
    with pytest.raises(PathOutsideError) as caught:
        if folder == "large":
            Journal.open(lane, **OPTIONS)
        else:
            submit(lane, "delete", {"records": {"1": None}})
    refused(caught, what, folder)
    if folder == "requests":
        with pytest.raises(PathOutsideError):
            pending(lane)


def test_an_attic_that_links_out_is_refused_and_the_damaged_file_stays(lane, outside):
    fill(lane, 3)
    bad = os.path.join(lane, "data-9999999999.sjd")
    with open(bad, "wb") as handle:
        handle.write(b"not a data file")
    os.symlink(outside, os.path.join(lane, "attic"))
    with pytest.raises(PathOutsideError) as caught:
        Journal.open(lane, recover="true", **OPTIONS)
    refused(caught, "the attic folder", "attic")
    assert os.path.exists(bad)


def test_a_request_file_that_is_a_link_out_is_refused(lane, tmp_path):
    fill(lane, 3)
    target = tmp_path / "secret.json"
    target.write_text('{"format": 1, "kind": "delete", "records": {}}')
    os.makedirs(os.path.join(lane, "requests"))
    os.symlink(target, os.path.join(lane, "requests", "00000000000000000001-x.json"))
    with pytest.raises(PathOutsideError) as caught:
        pending(lane)
    refused(caught, "lane request", "00000000000000000001-x.json")


def test_a_commit_log_under_the_root_that_links_out_is_refused(tmp_path, outside):
    root = str(tmp_path / "root")
    os.makedirs(root)
    os.symlink(outside, os.path.join(root, "_commits"))
    with pytest.raises(PathOutsideError) as caught:
        BatchCommitter(root, {})
    refused(caught, "commitLog", "_commits")
    with pytest.raises(PathOutsideError):
        BatchCommitter(root, {}, os.path.join(root, "sub", "..", "_commits", "x"))
    elsewhere = str(tmp_path / "log-on-other-storage")        # an explicit log elsewhere is fine
    BatchCommitter(root, {}, elsewhere).log.record("q", 0, [])
    assert os.listdir(os.path.join(elsewhere, "q"))
