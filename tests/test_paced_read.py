"""Maintenance's reads at its rate (io/paced_read.py): the files a pass is
about to scan are read into the page cache piece by piece, each piece taken
from the pass's rate, so reads and writes share one budget; uncapped, nothing
is read ahead; a file gone meanwhile is skipped."""
from __future__ import annotations

import os

from sparkjournal.io.io_rate import PIECE, IoRate
from sparkjournal.io.paced_read import prefetch


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
