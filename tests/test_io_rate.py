"""Maintenance writes paced by an IoRate (io_rate.py): the bytes written are
exactly the bytes of an unpaced write, every one of them goes through the
bucket, and a rate of 0 paces nothing. (How long pacing takes is a figure of
``sparkjournal bench maintenance``, never asserted here.)"""
from __future__ import annotations

import os

from sparkjournal.format.codec import CODEC
from sparkjournal.io.direct_write import Stage, write_new_file
from sparkjournal.io.files_io import write_file_atomically
from sparkjournal.io.io_rate import PIECE, UNCAPPED, IoRate


def body(size: int) -> bytes:
    return bytes((i * 7 + i // 4096) % 251 for i in range(size))


def test_paced_new_file_holds_the_same_bytes_and_crc_and_every_byte_was_paced(tmp_path):
    data = body(3 * PIECE + 12345)                    # whole pieces, then a partial block
    stage = Stage()
    plain = write_new_file(str(tmp_path / "plain"), stage, body=data)
    rate = IoRate(1 << 40)                            # capped, but too fast to wait
    paced = write_new_file(str(tmp_path / "paced"), stage, body=data, rate=rate)
    stage.release()
    assert paced == plain == CODEC.crc32c(data)
    assert (tmp_path / "paced").read_bytes() == (tmp_path / "plain").read_bytes() == data
    assert rate.taken == len(data)


def test_paced_filled_file_as_compaction_writes_it_is_the_same_file(tmp_path):
    size = 2 * PIECE + 4096
    pattern = body(size)

    def fill(view):
        view[:size] = pattern

    stage = Stage()
    rate = IoRate(1 << 40)
    write_new_file(str(tmp_path / "filled"), stage, size=size, fill=fill, rate=rate)
    stage.release()
    assert (tmp_path / "filled").read_bytes() == pattern and rate.taken == size


def test_paced_atomic_write_publishes_the_whole_file_and_no_tmp(tmp_path):
    data = body(PIECE + 999)
    rate = IoRate(1 << 40)
    write_file_atomically(str(tmp_path / "page.parquet"), data, rate=rate)
    assert (tmp_path / "page.parquet").read_bytes() == data
    assert os.listdir(tmp_path) == ["page.parquet"] and rate.taken == len(data)


def test_rate_zero_paces_nothing():
    UNCAPPED.take(1 << 30)
    assert not UNCAPPED.capped and UNCAPPED.taken == 0 and UNCAPPED.waited_s == 0


def test_a_new_bucket_paces_its_first_bytes_too():
    """No opening burst: a pass's first pieces wait for their share of the rate
    like every later one (the wait is the bucket's own account, not a clock)."""
    rate = IoRate(100 * PIECE)                        # a hundredth of a second per piece
    for _ in range(3):
        rate.take(PIECE)
    assert rate.taken == 3 * PIECE
    assert rate.waited_s >= 0.9 * 3 / 100
