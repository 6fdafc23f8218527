"""The next data file is created in the background after a roll empties the free
pool (journal/next_file.py), so the following roll does not zero-fill a file
inline; a half-created file is only ever a ``.tmp`` that no load reads."""
from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap

from sparkjournal import Journal
from sparkjournal.journal import files as files_module
from sparkjournal.journal import next_file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


def data_names(lane: str) -> list:
    return sorted(n for n in os.listdir(lane) if n.startswith("data-"))


def fill_until_rolls(journal, rolls: int, start: int = 1) -> int:
    record_id = start
    while journal._appender.stats["rolls"] < rolls:
        journal.append_add(record_id, os.urandom(1000), sync=False)
        record_id += 1
    return record_id


def test_roll_that_empties_the_pool_creates_the_next_file_in_the_background(lane, backend, monkeypatch):
    inline = []
    real_create = files_module.DataFiles.create
    monkeypatch.setattr(files_module.DataFiles, "create",
                        lambda self: inline.append(1) or real_create(self))
    with Journal.open(lane, journalType=backend, **SIZES) as journal:
        assert len(inline) == 2                           # minFiles at open: made inline
        inline.clear()
        next_id = fill_until_rolls(journal, 1)            # takes the one free file
        assert journal._files._next.pending
        fill_until_rolls(journal, 4, next_id)             # each roll takes the one made meanwhile
        assert inline == [], "a roll zero-filled a file inline"
        assert journal._appender.stats["rolls"] == 4
    assert not [n for n in os.listdir(lane) if n.endswith(".tmp")]


def test_close_waits_for_the_file_being_made_and_the_next_writer_pools_it(lane, backend):
    with Journal.open(lane, journalType=backend, **SIZES) as journal:
        fill_until_rolls(journal, 1)
        assert journal._files._next.pending
        in_use = len(journal.files)
    assert not [n for n in os.listdir(lane) if n.endswith(".tmp")]
    with Journal.open(lane, journalType=backend, **SIZES) as journal:
        assert len(journal.files) + len(journal.free_files) == in_use + 1
        assert journal.free_files and journal.report.attic == []


def test_failed_background_creation_is_retried_at_the_roll(lane, backend, monkeypatch):
    def disk_full(path, size, header):
        raise OSError(errno.ENOSPC, "no space")

    with Journal.open(lane, journalType=backend, **SIZES) as journal:
        monkeypatch.setattr(next_file, "create_zero_filled", disk_full)
        next_id = fill_until_rolls(journal, 1)
        monkeypatch.undo()
        last = fill_until_rolls(journal, 2, next_id)      # the roll creates its file itself
        journal.flush()
    with Journal.open(lane, journalType=backend, **SIZES) as journal:
        assert len(journal) == last - 1


CRASH_CHILD = textwrap.dedent("""
    import os, sys, time
    sys.path.insert(0, {repo!r})
    from sparkjournal import Journal
    from sparkjournal.io import files_io
    from sparkjournal.journal import next_file

    def stuck_create(path, size, header):
        # the background creation dies half way: part of the .tmp written, never renamed
        with open(path + ".tmp", "wb") as handle:
            handle.write(header + bytes(4096))
            handle.flush()
            os.fsync(handle.fileno())
        os.write(1, b"stuck\\n")          # one write: the main thread prints too
        time.sleep(60)

    next_file.create_zero_filled = stuck_create
    journal = Journal.open({lane!r}, fileSize="64k", bufferSize="16k", minFiles=2)
    record_id = 1
    while journal._appender.stats["rolls"] < 1:
        journal.append_add(record_id, bytes([record_id % 251]) * 1000, sync=False)
        record_id += 1
    journal.flush()
    os.write(1, f"{{record_id - 1}}\\n".encode())
    time.sleep(60)
""")


def test_crash_while_the_next_file_is_half_made_loses_nothing(lane):
    child = subprocess.Popen([sys.executable, "-c", CRASH_CHILD.format(repo=REPO, lane=lane)],
                             stdout=subprocess.PIPE, text=True)
    try:
        lines = {child.stdout.readline().strip(), child.stdout.readline().strip()}
        assert "stuck" in lines
        written = int(next(line for line in lines if line != "stuck"))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert [n for n in os.listdir(lane) if n.endswith(".sjd.tmp")]
    with Journal.read(lane, **SIZES) as snapshot:               # readers skip the .tmp
        assert len(snapshot) == written
    with Journal.open(lane, **SIZES) as journal:
        assert len(journal) == written
        assert journal.report.attic == [] and journal.report.recoveries == []
        assert {r.record_id: bytes(r.body) for r in journal.records()} == \
            {i: bytes([i % 251]) * 1000 for i in range(1, written + 1)}
    assert not [n for n in os.listdir(lane) if n.endswith(".tmp")]     # the writer deleted it
