"""The Python worker's share of a read, measured without Spark, for ``bench
read``: where a journal read's time goes against the Python floor.

Spark's Python worker writes each batch a data source yields with an Arrow
stream writer into a buffered socket that its JVM drains. Here the same batches
go the same way into a socket that a child process drains and discards; the
value is rows per second of this process's CPU time (user + system), so what
the JVM does with the rows is left out and a slow spell of the machine counts
less than in wall time. Contenders, over one lane and one floor file of the
same events:

* the floor: the batches of a memory-mapped Arrow IPC file, as they are;
* the floor in record-sized batches: the same, cut to the journal's mean rows
  per record (what batch size alone costs);
* the journal: the lane scan of the event columns (lane_scan.scan);
* the journal without CRC checks (``checksum=false``: what the checks cost).

A benchmark, never a test: nothing asserts a time.
"""
from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time

import pyarrow as pa

from ...events.lane_scan import LaneSlice, scan
from .report import REPORTED, BenchResult, Rounds

# The child drains its end of the socket until the parent closes it.
_DRAIN = ("import socket, sys\n"
          "s = socket.socket(fileno=int(sys.argv[1]))\n"
          "buf = bytearray(1 << 20)\n"
          "while s.recv_into(buf):\n"
          "    pass\n")
SOCKET_BUFFER = 65536              # Spark's worker: sock.makefile("wb", 65536)


@contextlib.contextmanager
def drained_socket():
    """A buffered binary file writing into a socket a child process drains."""
    ours, theirs = socket.socketpair()
    child = subprocess.Popen([sys.executable, "-c", _DRAIN, str(theirs.fileno())],
                             pass_fds=[theirs.fileno()])
    theirs.close()
    out = ours.makefile("wb", buffering=SOCKET_BUFFER)
    try:
        yield out
    finally:
        out.close()
        ours.close()
        child.wait(timeout=60)


def write_batches(batches, open_writer) -> int:
    """Writes every batch of the iterable ``batches`` through the Arrow writer
    ``open_writer(schema)`` makes for the first one, and closes it; the rows
    written (0, and no writer, for no batch)."""
    rows, writer = 0, None
    for batch in batches:
        if writer is None:
            writer = open_writer(batch.schema)
        writer.write_batch(batch)
        rows += batch.num_rows
    if writer is not None:
        writer.close()
    return rows


def cpu_rows_per_second(out, batches) -> float:
    """Writes every batch of the iterable ``batches`` as one Arrow stream into
    ``out``; rows per second of this process's CPU time."""
    started = time.process_time()
    rows = write_batches(batches, lambda schema: pa.ipc.new_stream(out, schema))
    out.flush()
    return rows / max(time.process_time() - started, 1e-9)


def ipc_batches(path: str, rows_per_batch: int | None = None):
    """The floor's batches: those of the memory-mapped Arrow IPC file ``path``,
    as written or cut to ``rows_per_batch`` rows (zero-copy slices)."""
    with pa.memory_map(path) as source:
        reader = pa.ipc.open_file(source)
        for index in range(reader.num_record_batches):
            batch = reader.get_batch(index)
            step = rows_per_batch or batch.num_rows
            for start in range(0, batch.num_rows, step):
                yield batch.slice(start, step)


def worker_results(lane: LaneSlice, events_schema: pa.Schema, journal_options: dict,
                   columns: pa.Schema, floor_file: str, record_rows: int, repeats: int,
                   log) -> list[BenchResult]:
    """The rows of ``bench read`` on the worker's share (module doc), each
    contender measured in ``repeats`` interleaved rounds after a warm-up."""
    unchecked = dict(journal_options, checksum="false")
    contenders = {
        "floor": lambda: ipc_batches(floor_file),
        "floor, record-sized batches": lambda: ipc_batches(floor_file, record_rows),
        "journal": lambda: scan(lane, events_schema, journal_options, columns=columns),
        "journal, no CRC checks": lambda: scan(lane, events_schema, unchecked, columns=columns)}
    with drained_socket() as out:
        measures = {name: (lambda batches=batches: cpu_rows_per_second(out, batches()))
                    for name, batches in contenders.items()}
        for measure in measures.values():
            measure()
        rounds = Rounds.run(measures, repeats, log, "python worker CPU (rows/s)")
    title = "python worker CPU, one lane, no Spark"
    return [
        rounds.result(f"{title}, journal event columns vs python floor", "journal", "floor",
                      "rows/cpu-s", 0.0, REPORTED),
        rounds.result(f"{title}, python floor in batches of {record_rows:,} rows (a record's) vs "
                      f"as written", "floor, record-sized batches", "floor", "rows/cpu-s", 0.0,
                      REPORTED, "what smaller batches alone cost"),
        rounds.result(f"{title}, journal vs the same without CRC checks", "journal",
                      "journal, no CRC checks", "rows/cpu-s", 0.0, REPORTED,
                      "what checking every record's CRC-32C costs")]
