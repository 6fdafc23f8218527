"""Maintenance's reads at maintenance's rate: the files a pass is about to
scan are brought into the page cache in pieces of io_rate.PIECE, each taken
from the pass's IoRate, before the pass maps them.

Why: a lane's files were written with O_DIRECT, so a pass's first touch of
their mapping reads the disk, and the kernel's readahead for a mapping reads
ahead in requests as large as the device takes (``read_ahead_kb`` is 8 MiB
on this disk, requests up to 4 MiB). The writer's synced commits then wait
behind those reads: beside a writer of synced 4 KiB commits, 1 MiB reads at
200 MB/s took its p99 from 0.36 to 1.05 ms, 128 KiB reads at 75 MB/s to
0.41 ms. As Kafka's cleaner throttle, the rate counts reads and writes alike.

Contract: ``prefetch`` asks the kernel to read each piece (POSIX_FADV_WILLNEED,
which starts the read and returns) at the rate's pace, so at most a piece or
two is in the device queue at once. Every byte counts against the rate,
cached or not (as Kafka's cleaner counts what it reads): telling cached pages
apart with a read that may not wait (RWF_NOWAIT) starts the kernel's full
readahead on a miss, the very read this paces.
It changes nothing on disk and nothing a reader sees: a file that vanishes
meanwhile is skipped (the scan that follows decides what that means).
Crash behaviour: none; it only reads.
"""
from __future__ import annotations

import os

from .io_rate import PIECE, IoRate


def prefetch(paths: list[str], rate: IoRate) -> int:
    """Reads ``paths`` into the page cache at ``rate``; returns the bytes
    asked for. Uncapped, nothing: the pass's own reads go as fast as they can."""
    if not rate.capped:
        return 0
    asked = 0
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        try:
            size = os.fstat(fd).st_size
            for offset in range(0, size, PIECE):
                piece = min(PIECE, size - offset)
                rate.take(piece)
                os.posix_fadvise(fd, offset, piece, os.POSIX_FADV_WILLNEED)
                asked += piece
        finally:
            os.close(fd)
    return asked
