"""Maintenance's reads at its rate (io/paced_read.py): the files a pass is
about to scan are read into the page cache piece by piece, each piece taken
from the pass's rate, so reads and writes share one budget; uncapped, nothing
is read ahead; a file gone meanwhile is skipped. A lane read ahead
(loader.prefetch_lane) is what its load reads, free files left out, and a
paging pass pays for its lane once, not once per page."""
from __future__ import annotations

import os

from paged_journal import make_root, page, page_files
from sparkjournal.events.page_records import PAGES
from sparkjournal.io.io_rate import PIECE, IoRate
from sparkjournal.io.paced_read import prefetch
from sparkjournal.journal.journal import Journal
from sparkjournal.journal.loader import prefetch_lane, scan_lane
from sparkjournal.journal.records import LoadReport


def _file(path, size: int) -> str:
    with open(path, "wb") as handle:
        handle.write(os.urandom(size))
    return str(path)


def test_every_byte_is_taken_from_the_rate_in_pieces(tmp_path):
    sizes = (3 * PIECE + 100, PIECE, 0)
    paths = [_file(tmp_path / f"f{n}", size) for n, size in enumerate(sizes)]
    rate = IoRate(1 << 30)
    taken = []
    original = rate.take
    rate.take = lambda nbytes: (taken.append(nbytes), original(nbytes))[1]
    assert prefetch(paths, rate) == sum(sizes)
    assert rate.taken == sum(sizes)
    assert taken == [PIECE, PIECE, PIECE, 100, PIECE], "no piece larger than PIECE"


def test_a_file_gone_meanwhile_is_skipped(tmp_path):
    present = _file(tmp_path / "present", 1000)
    rate = IoRate(1 << 30)
    assert prefetch([str(tmp_path / "gone"), present], rate) == 1000
    assert rate.taken == 1000


def test_uncapped_reads_nothing_ahead(tmp_path):
    path = _file(tmp_path / "f", 2 * PIECE)
    assert prefetch([path], IoRate(0)) == 0


def _lane_with_free_files(lane: str) -> None:
    """A lane whose records fill two of its files, the rest of its pool free."""
    with Journal.open(lane, fileSize="64k", bufferSize="16k", minFiles=6) as journal:
        for record_id in range(1, 13):
            journal.append_add(record_id, os.urandom(8000), sync=False)
        journal.flush()


def test_a_lane_is_read_ahead_as_its_load_reads_it_and_its_free_files_never(tmp_path):
    lane = str(tmp_path / "lane")
    _lane_with_free_files(lane)
    ahead = IoRate(1 << 40)
    asked = prefetch_lane(lane, ahead)
    by_scan = IoRate(1 << 40)
    files, _pending, _damaged = scan_lane(lane, LoadReport(), read_rate=by_scan)
    for file in files:
        file.mapped.close()
    every_file = sum(os.path.getsize(os.path.join(lane, n)) for n in os.listdir(lane)
                     if n.endswith(".sjd"))
    assert asked == ahead.taken == by_scan.taken > 0
    assert asked < every_file, "the pool's free files are not read"
    assert prefetch_lane(lane, IoRate(0)) == 0, "uncapped, nothing is read ahead"


def test_a_paging_pass_pays_for_the_lane_once_however_many_pages_it_writes(tmp_path):
    lane, node, log_uri = make_root(str(tmp_path / "root"), batches=6)
    unpaced = page(lane, node, log_uri, force=True, maintenanceBytesPerSecond=0)
    assert unpaced.pages_written == 1, unpaced.line()
    assert unpaced.bytes_read_ahead == unpaced.bytes_paced == 0, "uncapped: nothing paced"
    before = set(page_files(lane))
    report = page(lane, node, log_uri, force=False, addressFullPolicy="PAGE", maxSizeBytes="16k",
                  maintenanceBytesPerSecond="1g")
    assert report.pages_written >= 3, report.line()
    written = sum(os.path.getsize(os.path.join(lane, PAGES, name))
                  for name in set(page_files(lane)) - before)
    assert report.bytes_read_ahead > 0
    assert report.bytes_paced == report.bytes_read_ahead + written, (
        "the pass's rate took the lane once and each page file's bytes, not a load per page")
