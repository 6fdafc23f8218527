"""Who may touch the data: every folder and file a write, a compaction, a
reclaim into the archive, a lane request, a recovery into the attic and the
commit log create in a journal root has the journal's dirMode / fileMode
(0750 / 0640 by default) under the umask of the test."""
from __future__ import annotations

import contextlib
import os
import stat

import pytest

from sparkjournal import Journal
from sparkjournal.errors import ConfigError
from sparkjournal.events.commit_log import CommitLog, default_log_uri
from sparkjournal.events.node import node_id
from sparkjournal.events.requests import submit
from sparkjournal.journal.root import JournalRoot
from sparkjournal.maintenance.compactor import compact_lane

OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2, "largeRecordSize": "2k",
           "archive": "true", "poolFiles": 0}


@contextlib.contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_and_maintain(root: str, **options) -> None:
    """Everything that creates files in a root: a writer's data files, locks and
    a large body; reclaim and compaction into the archive; a lane request; a
    file moved to the attic; NODE_ID and the commit log under the root."""
    options = {**OPTIONS, **options}
    with JournalRoot(root, **options).open_writer() as journal:
        for record_id in range(1, 400):
            journal.append_add(record_id, bytes(900), user_type=1, sync=False)
        journal.append_add(1000, bytes(10_000), user_type=1)            # a large body
        for record_id in range(1, 380, 2):
            journal.append_delete(record_id, sync=False)
        journal.flush()
        lane = journal.directory
    node_id(root)
    report = compact_lane(lane, force=True, **options)
    assert report.compacted, report.line()
    submit(lane, "delete", {"records": {"2": None}})
    with open(os.path.join(lane, "data-9999999999.sjd"), "wb") as handle:   # wrong size
        handle.write(b"x")
    own_mode = int(options.get("fileMode", "0640"), 8) & ~current_umask()
    os.chmod(os.path.join(lane, "data-9999999999.sjd"), own_mode)     # the test's own file
    with Journal.open(lane, recover=True, **options) as journal:
        assert journal.report.attic
    CommitLog(default_log_uri(root)).record("query-1", 0, [])


def modes_under(root: str) -> dict[str, int]:
    found = {root: stat.S_IMODE(os.stat(root).st_mode)}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found[path] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


def assert_modes(root: str, dir_mode: int, file_mode: int) -> None:
    found = modes_under(root)
    kinds = {os.path.relpath(p, root).split(os.sep)[-1] for p in found}
    for expected in ("lane-000", "large", "archive", "attic", "requests", "_commits",
                     "journal.lock", "files.lock", "compact.lock", "files.gen", "NODE_ID"):
        assert expected in kinds, f"{expected} was not created: {sorted(kinds)}"
    wrong = {os.path.relpath(p, root): oct(m) for p, m in found.items()
             if m != (dir_mode if os.path.isdir(p) else file_mode)}
    assert not wrong, f"expected {oct(dir_mode)} / {oct(file_mode)}, found {wrong}"


def test_a_write_and_its_maintenance_create_folders_0750_and_files_0640_by_default(tmp_path):
    root = str(tmp_path / "root")
    with umask(0o022):
        write_and_maintain(root)
    assert_modes(root, 0o750, 0o640)


def test_dir_mode_and_file_mode_options_set_what_is_created(tmp_path):
    root = str(tmp_path / "root")
    with umask(0o022):
        write_and_maintain(root, dirMode="0700", fileMode="0600")
    assert_modes(root, 0o700, 0o600)


def test_the_umask_still_removes_bits(tmp_path):
    root = str(tmp_path / "root")
    with umask(0o077):
        write_and_maintain(root)
    assert_modes(root, 0o700, 0o600)


@pytest.mark.parametrize("key,value", [("dirMode", "0777"), ("dirMode", "0650"),
                                       ("fileMode", "0400"), ("fileMode", "rw-r-----")])
def test_a_mode_that_would_let_others_write_or_the_owner_not_work_is_refused(tmp_path, key, value):
    with pytest.raises(ConfigError) as caught:
        Journal.open(str(tmp_path / "lane"), **{key: value})
    assert caught.value.key == key and repr(value) in str(caught.value)
    assert "no write for others" in str(caught.value)
    assert not os.path.exists(tmp_path / "lane")
