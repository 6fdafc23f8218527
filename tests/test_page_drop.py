"""Dropping pages whose events are all deleted (maintenance/page_drop.py),
without Spark: a maintenance pass drops such a page - its PAGE record and the
deletion vectors of its records die in one transaction, then its file goes -
and keeps a page with a row left; a lane held by a writer gets the drop as a
request; a reader whose snapshot holds the page live still reads it; and a
pass SIGKILLed between the PAGE record's death and the file's removal leaves
reads unchanged and an orphan the next run removes."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

import pyarrow as pa
import pytest

from sparkjournal import Journal
from sparkjournal.cli.main import main
from sparkjournal.config import load_config
from sparkjournal.events.deletions import DELETION_VECTOR, Deletions, decode_vector
from sparkjournal.events.commit_log import CommitLog
from sparkjournal.events.lane_scan import METADATA, spark_facing
from sparkjournal.events.page_scan import read_page
from sparkjournal.events.requests import pending
from sparkjournal.maintenance import paging
from sparkjournal.maintenance.lane_maintenance import maintain_lane

from paged_journal import SMALL, delete, make_root, page, page_files, pages, rows

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALL_ROWS = list(range(100))                  # make_root: 100 rows per record


@pytest.fixture
def paged(tmp_path):
    """(root, lane, node, commit log, first page, second page): records 1-4
    in the first page, 5-8 in the second, 9-20 in the journal."""
    root = str(tmp_path / "journal")
    lane, node, log_uri = make_root(root)
    page(lane, node, log_uri)
    page(lane, node, log_uri)
    (_a, first), (_b, second) = pages(lane)
    assert (first.record_ids, second.record_ids) == ((1, 2, 3, 4), (5, 6, 7, 8))
    return root, lane, node, log_uri, first, second


def vector_targets(lane: str) -> set:
    with Journal.read(lane) as snapshot:
        return {decode_vector(record.body)[0] for record in snapshot.records()
                if record.user_type == DELETION_VECTOR}


def live_names(lane: str) -> list[str]:
    return [ref.name for _record_id, ref in pages(lane)]


def test_fully_deleted_page_is_dropped(paged, capsys):
    root, lane, node, log_uri, first, second = paged
    # Every row of the first page, in every way a row is deleted: records
    # whole, all positions of a record, a record's positions in two deletes.
    delete(lane, {1: None, 2: None, 3: ALL_ROWS})
    delete(lane, {4: ALL_ROWS[:50]})
    delete(lane, {4: ALL_ROWS[50:], 5: [0, 1], 12: [3]})     # and rows of others
    assert {1, 2, 3, 4, 5, 12} <= vector_targets(lane)
    before = rows(root)
    assert len(before) == 2000 - 400 - 3
    report = maintain_lane(lane, node, log_uri, load_config(SMALL), force=True)
    assert report.error is None, report.line()
    assert report.paging.pages_dropped == 1 and report.paging.orphans_removed == 1
    assert "1 pages dropped (every event deleted)" in report.line(), report.line()
    assert page_files(lane) == live_names(lane) == [second.name]
    targets = vector_targets(lane)
    assert not targets & set(first.record_ids)               # gone with the page
    assert 5 in targets                                       # the kept page's stay
    assert rows(root) == before
    # Nothing resurrected: deleting the dropped records again writes nothing.
    delete(lane, {1: None, 4: [7]})
    assert not vector_targets(lane) & set(first.record_ids)
    assert rows(root) == before
    again = maintain_lane(lane, node, log_uri, load_config(SMALL), force=True)
    assert again.paging.pages_dropped == 0 and again.paging.orphans_removed == 0, again.line()
    assert main(["verify", root]) == 0
    out = capsys.readouterr().out
    assert "1 page file: clean" in out and "ORPHAN" not in out, out


def test_partly_deleted_page_is_kept(paged):
    root, lane, node, log_uri, first, second = paged
    delete(lane, {1: None, 2: None, 3: None, 4: ALL_ROWS[:-1]})    # one row left
    before = rows(root)
    assert [row[0] for row in before[:1]] == [399]                 # record 4's last row
    report = page(lane, node, log_uri, force=False)
    assert report.pages_dropped == 0 and "dropped" not in report.line(), report.line()
    assert page_files(lane) == sorted(live_names(lane)) == sorted([first.name, second.name])
    assert set(first.record_ids) <= vector_targets(lane)
    assert rows(root) == before
    delete(lane, {4: ALL_ROWS[-1:]})                               # the last one
    report = page(lane, node, log_uri, force=False)
    assert report.pages_dropped == 1 and report.orphans_removed == 1, report.line()
    assert page_files(lane) == live_names(lane) == [second.name]
    assert rows(root) == before[1:]


def test_a_held_lane_gets_the_drop_as_a_request_its_writer_carries_out(paged):
    root, lane, node, log_uri, first, second = paged
    delete(lane, {1: None, 2: None, 3: None, 4: None})
    before = rows(root)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom sparkjournal import Journal\n"
         "from sparkjournal.maintenance.lane_requests import carry_out_all\n"
         "j = Journal.open(sys.argv[1], fileSize='64k', bufferSize='16k')\n"
         "print('held', flush=True)\nsys.stdin.readline()\n"
         "print(carry_out_all(j), flush=True)\nj.close()\n", lane],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": REPO})
    try:
        assert holder.stdout.readline() == b"held\n"
        report = page(lane, node, log_uri, force=False)
        assert report.drops_pending == 1 and report.pages_dropped == 0, report.line()
        assert "1 page drops left to the lane's live writer" in report.line()
        assert first.name in live_names(lane) and first.name in page_files(lane)
        again = page(lane, node, log_uri, force=False)             # no second request
        assert again.drops_pending == 1 and len(pending(lane)) == 1
        assert rows(root) == before
        holder.stdin.write(b"go\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == b"1\n"
    finally:
        holder.kill()
        holder.wait()
    assert live_names(lane) == [second.name] and first.name in page_files(lane)
    assert rows(root) == before
    report = page(lane, node, log_uri, force=False)              # the orphan goes
    assert report.orphans_removed == 1 and page_files(lane) == [second.name], report.line()
    assert rows(root) == before and not pending(lane)


def test_a_reader_holding_the_page_live_still_reads_it(paged, monkeypatch):
    root, lane, node, log_uri, first, second = paged
    delete(lane, {1: None, 2: None, 3: None, 4: None})
    before = rows(root)
    monkeypatch.setattr(paging, "REMOVE_WAIT_SECONDS", 0.2)
    schema = spark_facing(CommitLog(log_uri).read_schema())
    full = pa.schema(list(schema) + list(METADATA))
    with Journal.read(lane) as snapshot:                          # holds the file-set lock
        report = page(lane, node, log_uri, force=False)
        assert report.pages_dropped == 1 and report.orphans_left == 1, report.line()
        assert "1 orphan page files left to the next run (readers held the lane)" in report.line()
        assert first.name not in live_names(lane) and first.name in page_files(lane)
        read = sum(batch.num_rows for batch in read_page(lane, first, full, Deletions()))
        assert read == first.rows == 400                          # as the snapshot planned
    assert rows(root) == before
    report = page(lane, node, log_uri, force=False)
    assert report.orphans_removed == 1 and page_files(lane) == [second.name], report.line()


CRASH_POINTS = ["page-drop:before-commit", "page-drop:committed", "page-drop:requests-done"]


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_drop_killed_between_the_records_death_and_the_files_removal(paged, capsys, point):
    root, lane, node, log_uri, first, second = paged
    delete(lane, {1: None, 2: None, 3: ALL_ROWS, 4: None})
    before = rows(root)
    code = ("import sys\nfrom sparkjournal.config import load_config\n"
            "from sparkjournal.maintenance.paging import page_lane\n"
            "page_lane(sys.argv[1], sys.argv[2], sys.argv[3], load_config({'fileSize': '64k', "
            "'bufferSize': '16k', 'pageSizeBytes': '20k'}))\n")
    child = subprocess.run([sys.executable, "-c", code, lane, node, log_uri], capture_output=True,
                           env={**os.environ, "PYTHONPATH": REPO, "SPARKJOURNAL_CRASH_AT": point})
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    dead = point != "page-drop:before-commit"
    assert (first.name in live_names(lane)) == (not dead)
    assert first.name in page_files(lane)                         # the file is still there
    assert rows(root) == before
    assert bool(pending(lane)) == (point != "page-drop:requests-done")
    status = main(["verify", root])
    out = capsys.readouterr().out
    assert status == 0 and ("ORPHAN" in out) == dead, out       # dead: an orphan, not damage
    report = page(lane, node, log_uri, force=False)
    assert report.pages_dropped == (0 if dead else 1), report.line()
    assert report.orphans_removed == 1, report.line()
    assert page_files(lane) == live_names(lane) == [second.name]
    assert not pending(lane) and not vector_targets(lane) & set(first.record_ids)
    assert rows(root) == before
