"""A cap on the bytes per second one maintenance pass reads and writes (Kafka's
``log.cleaner.io.max.bytes.per.second``): compaction and paging share the disk
with the lane's writer, whose synced commits queue behind their big writes.
Written in pieces of at most ``PIECE`` bytes, each taken from a token bucket,
a pass keeps the device's queue short, so the writer's syncs wait behind at
most one piece.

A bucket is shared by the threads of one pass (thread-safe). It starts
empty and holds at most BURST_SECONDS of bytes, so a pass never bursts past
its rate: a bucket that started full let every compaction open with 20 MiB
at once (a tenth of a second at the default 200 MiB/s), and the writer's
syncs beside it waited for all of it (the longest stall, 13.6 ms against
2.8 ms alone). The cap still absorbs a sleep that overran, up to its size.
A rate of 0 means no cap. A pass's reads take from the same bucket as its
writes (paced_read.py): the lane's files are read into the page cache piece by
piece before the pass maps them.

Crash behaviour: none of its own; waiting only delays the writes it paces.
"""
from __future__ import annotations

import threading
import time

PIECE = 128 << 10               # bytes written between two takes
BURST_SECONDS = 0.02            # the most a bucket holds, in seconds of its rate


class IoRate:
    def __init__(self, bytes_per_second: int):
        self.bytes_per_second = bytes_per_second
        self._lock = threading.Lock()
        self._tokens = 0.0                                      # starts empty: no opening burst
        self._last = time.monotonic()
        self.waited_s = 0.0             # total time this bucket made writers wait
        self.taken = 0                  # bytes paced through it

    @property
    def capped(self) -> bool:
        return self.bytes_per_second > 0

    def take(self, nbytes: int) -> None:
        """Returns once ``nbytes`` may be written at this rate (at once when uncapped)."""
        if not self.capped:
            return
        with self._lock:
            self.taken += nbytes
            now = time.monotonic()
            rate = float(self.bytes_per_second)
            self._tokens = min(rate * BURST_SECONDS, self._tokens + (now - self._last) * rate)
            self._last = now
            self._tokens -= nbytes
            wait = -self._tokens / rate if self._tokens < 0 else 0.0
            self.waited_s += wait
        if wait:
            time.sleep(wait)


UNCAPPED = IoRate(0)
