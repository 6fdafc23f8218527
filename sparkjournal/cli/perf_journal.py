"""``sparkjournal perf-journal DIR``: how many synced writes per second the
journal's own I/O backend gets on this disk, and the bufferTimeout to configure
(Artemis's ``artemis perf-journal`` and its journal-buffer-timeout).

Method: a file of ``writes`` x 4 KiB is pre-created zero-filled in DIR (as the
journal creates its data files), opened through the backend the journal would
choose there (sparkjournal.io.probe.choose_factory), and each round writes
``writes`` 4 KiB blocks at increasing offsets, each followed by a sync. The
suggested bufferTimeout is the mean time per synced write over all rounds: a
writer waiting longer than that to fill its buffer waits longer than a sync
costs. The file is removed afterwards, also after a failure.
"""
from __future__ import annotations

import mmap
import os
import sys
import time

from ..config import load_config
from ..errors import UsageError
from ..io.device import block_device_of
from ..io.files_io import create_zero_filled
from ..io.probe import choose_factory
from ..units import config_time

WRITE_SIZE = 4096
PERF_FILE = ".sj-perf-journal.dat"


def measure(directory: str, rounds: int, writes: int, journal_type: str, report=print) -> dict:
    config = load_config({"journalType": journal_type})
    path = os.path.join(directory, PERF_FILE)
    factory = choose_factory(directory, config)
    seconds = []
    try:
        create_zero_filled(path, writes * WRITE_SIZE, b"")
        with mmap.mmap(-1, WRITE_SIZE) as block, factory.open(path) as out:
            block[:] = b"\x5a" * WRITE_SIZE
            data = memoryview(block)
            for number in range(1, rounds + 1):
                started = time.perf_counter()
                for index in range(writes):
                    out.write(data, index * WRITE_SIZE)
                    out.sync()
                elapsed = time.perf_counter() - started
                seconds.append(elapsed)
                report(f"round {number}: {writes} synced {WRITE_SIZE}-byte writes in "
                       f"{elapsed * 1e3:.1f} ms: {writes / elapsed:,.0f} writes/s")
            data.release()
    finally:
        factory.close()
        if os.path.exists(path):
            os.unlink(path)
    total = sum(seconds)
    mean_ns = total / (rounds * writes) * 1e9
    return {"backend": factory.kind, "reason": factory.reason, "rounds": seconds,
            "writes_per_second": rounds * writes / total, "mean_ns": mean_ns,
            "buffer_timeout": config_time(mean_ns)}


def run(args) -> int:
    if not os.path.isdir(args.dir):
        raise UsageError(f"{args.dir} is not an existing folder: give a folder on the disk the "
                         f"journal will use")
    device = block_device_of(args.dir)
    print(f"perf-journal: {args.dir}, device {device.name or '-'}; {args.rounds} rounds x "
          f"{args.writes} synced {WRITE_SIZE}-byte writes into a zero-filled file")
    result = measure(args.dir, args.rounds, args.writes, args.journal_type)
    print(f"backend: {result['backend']} ({result['reason']})")
    print(f"average: {result['writes_per_second']:,.0f} synced writes/s, "
          f"{result['mean_ns'] / 1000:.1f} us per synced write")
    print(f"bufferTimeout {result['buffer_timeout']}")
    print(f"  (set `bufferTimeout {result['buffer_timeout']}` in sparkjournal.conf, or pass "
          f"bufferTimeout=\"{result['buffer_timeout']}\" as an option)")
    print(f"write cache: {device.write_cache} ({device.detail})")
    print(device.explanation())
    sys.stdout.flush()
    return 0
