"""A real full disk: a small size-limited tmpfs (needs root; skipped otherwise).

A writer appends until the file system is full. The call that fails must raise
JournalIOError saying the disk is full (errno ENOSPC), and after a reopen every
record acknowledged before the failure is there, with its body.
"""
from __future__ import annotations

import contextlib
import errno
import os
import subprocess

import pytest

from sparkjournal import Journal, JournalIOError

OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


@contextlib.contextmanager
def small_disk(path: str, size_k: int):
    os.makedirs(path, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_k}k", "tmpfs", path],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a size-limited tmpfs here (needs root / CAP_SYS_ADMIN): "
                    f"{result.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", path], check=False)


def body(record_id: int) -> bytes:
    return (f"{record_id}:" * 40).encode()[:200]


def fill_until_full(journal, start: int = 1, limit: int = 100_000):
    acked = []
    for record_id in range(start, start + limit):
        try:
            journal.append_add(record_id, body(record_id), user_type=1)
        except JournalIOError as error:
            return acked, error
        acked.append(record_id)
    return acked, None


def test_disk_full_fails_clearly_and_keeps_every_acknowledged_record(tmp_path, backend):
    with small_disk(str(tmp_path / "disk"), 512) as disk:
        ballast = os.path.join(disk, "ballast")        # someone else's file on the same disk
        with open(ballast, "wb") as handle:
            handle.write(b"\0" * (128 << 10))
        lane = os.path.join(disk, "lane")
        journal = Journal.open(lane, journalType=backend, **OPTIONS)
        try:
            acked, error = fill_until_full(journal)
            assert error is not None, "the disk never filled up"
            assert error.errno == errno.ENOSPC
            assert "disk is full" in str(error), str(error)
            assert len(acked) > 100
            # Later calls keep failing clearly (nothing half-done in between).
            with pytest.raises(JournalIOError):
                journal.append_add(10 ** 9, body(1))
        finally:
            with contextlib.suppress(JournalIOError):
                journal.close()
        assert not [n for n in os.listdir(lane) if n.endswith(".tmp")]

        with Journal.open(lane, journalType=backend, **OPTIONS) as reopened:
            found = {r.record_id: bytes(r.body) for r in reopened.records()}
            assert found == {i: body(i) for i in acked}
            assert reopened.report.recoveries == [] and reopened.report.attic == []

        # Once space is freed the same lane goes on, and deletes let files be reused.
        os.unlink(ballast)
        with Journal.open(lane, journalType=backend, **OPTIONS) as journal:
            for record_id in acked:
                journal.append_delete(record_id, sync=False)
            journal.flush()
            # ~3.5 files of new records: more than the space the ballast left, so
            # this only fits because the dead files are reused.
            more, error = fill_until_full(journal, start=10 ** 6, limit=400)
            assert len(more) == 400, error
        with Journal.open(lane, journalType=backend, **OPTIONS) as again:
            assert {r.record_id: bytes(r.body) for r in again.records()} == \
                {i: body(i) for i in more}


def test_disk_full_on_large_record_fails_clearly(tmp_path, backend):
    with small_disk(str(tmp_path / "disk"), 256) as disk:
        lane = os.path.join(disk, "lane")
        with Journal.open(lane, journalType=backend, **OPTIONS) as journal:
            journal.append_add(1, b"small")
            with pytest.raises(JournalIOError) as caught:
                journal.append_add(2, os.urandom(200_000))      # a large record: its own file
            assert caught.value.errno == errno.ENOSPC and "disk is full" in str(caught.value)
            journal.append_add(3, b"still writable")
        large = os.path.join(lane, "large")
        assert not os.listdir(large), "a partial large body was left behind"
        with Journal.open(lane, journalType=backend, **OPTIONS) as journal:
            assert {r.record_id: bytes(r.body) for r in journal.records()} == \
                {1: b"small", 3: b"still writable"}


def test_disk_full_during_compaction_fails_clearly_and_changes_nothing(tmp_path):
    """Compaction writes its new files beside the old ones; with no room for
    them it fails saying the disk is full, leaves no .cmp file or control file,
    and the lane reads and writes as before; with room again it compacts."""
    from sparkjournal.maintenance.compactor import compact_lane
    with small_disk(str(tmp_path / "disk"), 768) as disk:
        lane = os.path.join(disk, "lane")
        with Journal.open(lane, **OPTIONS) as journal:
            for record_id in range(1, 1500):
                journal.append_add(record_id, body(record_id), user_type=1, sync=False)
            for record_id in range(1, 1500, 3):
                journal.append_delete(record_id, sync=False)
        live = {i: body(i) for i in range(1, 1500) if i % 3 != 1}
        ballast = os.path.join(disk, "ballast")
        fd = os.open(ballast, os.O_WRONLY | os.O_CREAT, 0o600)  # fill what is left
        try:
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * 4096):
                    pass
        finally:
            os.close(fd)
        with pytest.raises(JournalIOError) as caught:
            compact_lane(lane, force=True, **OPTIONS)
        assert caught.value.errno == errno.ENOSPC and "disk is full" in str(caught.value)
        assert lane in str(caught.value)
        assert not [n for n in os.listdir(lane) if n.endswith((".cmp", ".tmp", ".ctl"))]
        with Journal.read(lane, **OPTIONS) as snapshot:
            assert {r.record_id: bytes(r.body) for r in snapshot.records()} == live

        os.unlink(ballast)
        report = compact_lane(lane, force=True, **OPTIONS)
        assert report.compacted, report.line()
        with Journal.open(lane, **OPTIONS) as journal:
            assert {r.record_id: bytes(r.body) for r in journal.records()} == live
