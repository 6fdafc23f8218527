"""Appending one transaction's records from a thread of its own, so that the
caller gets its next chunk of bodies ready (a Spark task: receives the next
Arrow batches from the JVM, splits and tags them) while the previous chunk is
serialized, encoded, checksummed and written. Both sides spend most of their
time outside the GIL (Arrow IPC, the C encoder, the writes), so they overlap
on two cores.

    with PipelinedAppend(journal, tx_id, user_type) as pipe:
        for chunk in chunks:
            pipe.put(chunk)               # returns once the chunk is queued
        appended = pipe.finish()          # every chunk appended (not synced)

Contract: chunks are appended in the order given, each as one
``append_batch(..., tx_id, sync=False)``; the caller touches the journal only
after ``finish`` returned (the appender thread is then done) or after the
``with`` block ended. At most ``depth`` chunks wait, so memory stays bounded
by the chunks in flight. The first failure of an append is raised to the
caller at its next ``put`` or at ``finish``, and nothing is appended after
it; leaving the ``with`` block early (an exception in the caller) stops the
thread after the append in progress and discards the queued chunks.

Crash behaviour: as plain appends of an unprepared transaction - killed before
the PREPARE is durable, the transaction is open and the lane's next opener
rolls it back.
"""
from __future__ import annotations

import queue
import threading
import time

_END = object()


class PipelinedAppend:
    def __init__(self, journal, tx_id: int, user_type: int, depth: int = 2):
        self._journal, self._tx, self._user_type = journal, tx_id, user_type
        self._chunks: queue.Queue = queue.Queue(maxsize=depth)
        self._failure: BaseException | None = None
        self._stopped = threading.Event()
        self.records = 0
        self.append_s = 0.0               # time the appender thread spent appending
        self._thread = threading.Thread(target=self._run, name="sparkjournal-append", daemon=True)
        self._thread.start()

    def put(self, bodies: list) -> None:
        """Queues one chunk; raises the appender's failure if it has failed."""
        self._raise_failure()
        while True:
            try:
                self._chunks.put(bodies, timeout=0.05)
                return
            except queue.Full:
                self._raise_failure()

    def finish(self) -> int:
        """Waits until every queued chunk is appended; the records appended."""
        self._chunks.put(_END)
        self._thread.join()
        self._raise_failure()
        return self.records

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _run(self) -> None:
        while not self._stopped.is_set():
            bodies = self._chunks.get()
            if bodies is _END:
                return
            started = time.perf_counter()
            try:
                done = self._journal.append_batch(bodies, user_type=self._user_type, tx_id=self._tx,
                                                  sync=False)
            except BaseException as error:        # handed to the caller, never lost
                self._failure = error
                return
            self.records += len(done)
            self.append_s += time.perf_counter() - started

    def __enter__(self) -> "PipelinedAppend":
        return self

    def __exit__(self, *exc) -> None:
        """Stops the thread; on an early exit the queued chunks are dropped."""
        if self._thread.is_alive():
            self._stopped.set()
            while self._thread.is_alive():
                try:
                    self._chunks.get_nowait()          # unblock a full queue
                except queue.Empty:
                    pass
                try:
                    self._chunks.put_nowait(_END)
                except queue.Full:
                    pass
                self._thread.join(timeout=0.05)
