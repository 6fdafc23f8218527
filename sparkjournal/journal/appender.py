"""Group commit: the timed buffer between appending threads and the data files.

Appends from any thread are encoded straight into a shared buffer under one lock,
in log order; the state is updated in the same critical section, so the state's
order is the log's order. A thread that needs durability becomes the *leader*
if no flush is running: it swaps the buffer out, writes it (padded with zeros to
the block size) and syncs, with the lock released, while the others keep filling
the other buffer; when it returns, every append it carried is durable and the
waiters wake; one of those whose records came later leads the next flush. One
writer thus pays no timer, and many writers share one write and one sync.
Appends that need no sync are written when the buffer fills or ``bufferTimeout``
after the first of them, by a background flusher.

A record too big for the buffer (but not for a data file) is written alone,
straight from an aligned staging buffer, by ``append_alone`` (see there).

Invariants the loader relies on (FORMAT.md):
* the bytes written past the last completed sync never exceed the header's sync
  window (maxIO x bufferSize): a flush that would cross it first syncs what is
  already written; the one exception is a record written alone, which is
  larger than the window but has nothing unsynced before it and nothing
  written after it until its own sync returned;
* a file is synced before the first write into the next one.

Crash behaviour: an append is acknowledged (its call returns, for sync appends)
only after the sync that covers it returned. A failed write or sync poisons the
appender: every later call raises JournalIOError; nothing acknowledged is lost.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from ..errors import JournalClosedError, JournalIOError
from ..format import layout
from ..io.direct_write import Stage
from ..io.files_io import aligned_buffer
from .gate import new_gate

Encoder = Callable[[bytearray, int, int], int]   # (buffer, position, file id32) -> new position
# (staging view, file id32) -> (record end, seal): body in place, header not yet encoded
AloneEncoder = Callable[[memoryview, int], tuple[int, Callable[[], None]]]


class Appender:
    def __init__(self, files, factory, config, start_offset: int, data_end: int,
                 on_roll: Callable[[], None] | None = None):
        self.files, self.factory, self.config = files, factory, config
        self.block = config.deviceBlockSize
        self.capacity = config.bufferSize
        self.window = config.sync_window
        self.on_roll = on_roll
        self._lock = threading.Lock()
        self._gate = new_gate()                               # waiters for durability
        self._timer = threading.Condition(self._lock)         # the flusher, for timed writes
        # page-aligned: O_DIRECT writes straight from them (io/direct_write.py)
        self._buf, self._spare = aligned_buffer(self.capacity), aligned_buffer(self.capacity)
        self._stage = Stage()                  # records written alone; grows on first use
        self._fill = 0
        self._out = factory.open(files.current.path)
        self._file_pos = start_offset          # where _buf[0] lands; block aligned
        self._data_end = data_end              # exact end of the last record written
        self._appended = self._written = self._durable = 0
        self._unsynced = 0
        self._flushing = False
        self._gathering = False                # a leader is letting others append first
        self._gather_cond = threading.Condition(self._lock)
        self._gather_seconds = min(config.bufferTimeout / 1e9, 100e-6)
        self._last_flush_records = 0
        self._failure: BaseException | None = None
        self._closed = False
        self._first_unflushed_at = 0.0
        self._timeout = config.bufferTimeout / 1e9
        self._flusher = threading.Thread(target=self._timed_flushes, name="sparkjournal-flusher",
                                         daemon=True)
        self._flusher.start()
        self.stats = {"flushes": 0, "syncs": 0, "bytes": 0, "rolls": 0}

    # --- the append path ------------------------------------------------------------
    @property
    def lock(self) -> threading.Lock:
        return self._lock

    def append(self, size: int, encode: Encoder, apply: Callable[[int, int], None],
               sync: bool) -> None:
        """Encodes one record of ``size`` bytes (record_size of its body) and calls
        ``apply(file id, offset)`` to update the state; returns once durable if
        ``sync``. Encoding errors leave the buffer as it was."""
        with self._lock:
            lone = sync and self._idle_with_room(size)
            if not lone:
                self._room_for(size)
            file_id = self.files.current.file_id
            offset = self._file_pos + self._fill
            self._fill = encode(self._buf, self._fill, layout.file_id32(file_id))
            apply(file_id, offset)
            self._appended += 1
            if lone:                 # nobody to wait for or follow: write and sync it now
                self._flush(sync=True)
                return
            mine = self._appended
            if self._gathering and mine - self._written >= self._last_flush_records:
                self._gather_cond.notify()
            if not sync:
                self._after_append(False)
                return
            seen = self._lead_until_durable(mine)
        if seen is not None:
            self._follow(mine, seen)

    def append_many(self, encode_some: Callable[[bytearray, int, int], tuple], sync: bool) -> None:
        """Batch path: ``encode_some(buffer, position, file id32)`` encodes as many
        records as fit and returns (new position, done?, apply(file id, offset of
        the buffer's start in the file)); called again after each flush until done."""
        with self._lock:
            while True:
                self._check()
                file_id = self.files.current.file_id
                room = min(self.capacity, self._file_size() - self._file_pos)
                view = memoryview(self._buf)[:room]
                new_fill, done, apply = encode_some(view, self._fill, layout.file_id32(file_id))
                view.release()
                progressed = new_fill != self._fill
                self._fill = new_fill
                if progressed:
                    apply(file_id, self._file_pos)
                    self._appended += 1
                if done:
                    break
                if self._fill == 0 and not progressed:
                    self._roll()                 # not even one record fits what is left of the file
                else:
                    self._flush(sync=False)
            self._after_append(sync)

    def append_alone(self, size: int, encode: AloneEncoder, apply: Callable[[int, int], None]) -> None:
        """A record of ``size`` bytes that does not fit the write buffer but fits a
        data file after its header: ``encode(view, file id32)`` checks it may be
        appended (raising before anything is written), puts its body in place in
        an aligned staging view with zeros after it, and returns the record's end
        and ``seal``, which encodes the header and CRC without changing any byte
        past the first block (the backend may write those meanwhile:
        SequentialFile.write_alone). It is written in one write (padded with zeros
        to the block) into the current file, or the next one when the rest of the
        current file is too short, and synced. Returns once it is durable,
        whatever the caller asked for.

        Why alone, with a sync on both sides: the record may be larger than the
        sync window. Everything appended before it is durable before it is
        written, and nothing is written after it until its sync returned; so a
        crash that tears it leaves no valid record of this file after the damage,
        and the loader sees a clean end of data (FORMAT.md), never corruption.
        The file header written by a roll may still be unsynced: it is no record,
        and if it is lost the record, carrying the new file id, is stale."""
        if size > self.files.config.fileSize - layout.FILE_HEADER_SIZE:
            raise ValueError(f"a record of {size} bytes does not fit a data file of "
                             f"{self.files.config.fileSize} bytes")
        with self._lock:
            while True:
                self._check()
                if self._file_pos + self._fill + size > self._file_size():
                    self._roll()
                elif self._flushing or self._fill or self._durable < self._appended:
                    self._flush(sync=True)       # also waits until the stage is free
                else:
                    break
            file_id, offset = self.files.current.file_id, self._file_pos
            length = layout.align_up(size, self.block)
            view = self._stage.view(length)[:length]
            end, seal = encode(view, layout.file_id32(file_id))
            apply(file_id, offset)
            self._appended += 1
            self._data_end = offset + end
            self._file_pos = offset + length
            self._io(self._out, view, offset, length, self._appended, sync=True, sync_first=False,
                     seal=seal)

    def _idle_with_room(self, size: int) -> bool:
        """With the lock held: a synced append may go straight to _flush, past
        the room, lead and follow logic: the journal is healthy, no flush is
        running or gathering, the last flush carried one append (one writer:
        nobody to wait for), nothing is written but unsynced (no sync window to
        mind), and the record fits both the buffer and the current file."""
        return (self._failure is None and not self._closed and not self._flushing
                and not self._gathering and self._last_flush_records <= 1 and not self._unsynced
                and self._fill + size <= self.capacity
                and self._file_pos + self._fill + size <= self.files.current.header.file_size)

    def _after_append(self, sync: bool) -> None:
        """Waits until everything appended is durable, or arms the timed flush."""
        if sync:
            self._wait_durable(self._appended)
        elif not self._first_unflushed_at:
            self._first_unflushed_at = time.monotonic()
            self._timer.notify()

    def _file_size(self) -> int:
        """The current file's own size: a lane's files keep the size they were
        created with when fileSize changes (the loader moves a file whose size
        differs from its header to the attic, so nothing may grow one)."""
        return self.files.current.header.file_size

    def _room_for(self, size: int) -> None:
        while True:
            self._check()
            if self._file_pos + self._fill + size > self._file_size():
                self._roll()
            elif self._fill + size > self.capacity:
                self._flush(sync=False)
            else:
                return

    def _check(self) -> None:
        if self._failure is not None:
            raise JournalIOError(getattr(self._failure, "errno", None) or 5,
                                 f"the journal stopped after a failed write or sync ({self._failure}); "
                                 f"everything acknowledged before it is durable. Reopen the journal "
                                 f"to continue") from self._failure
        if self._closed:
            raise JournalClosedError("the journal is closed")

    def _lead_until_durable(self, seq: int) -> int | None:
        """With the lock held: flushes until ``seq`` is durable and returns None,
        unless another thread's flush is running or gathering: then returns the
        gate generation to follow it with, outside the lock."""
        while self._durable < seq:
            self._check()
            if self._flushing or self._gathering:
                return self._gate.generation()
            if self._last_flush_records > 1:
                self._gather()
            self._flush(sync=True)
        return None

    def _follow(self, seq: int, seen: int) -> None:
        """Without the lock: sleeps in C (no GIL) until the durable mark covers
        ``seq`` and returns, never touching the lock; only if a flush ended
        without covering it (or the journal failed or closed) does it take the
        lock again, to lead the next flush or raise."""
        if self._gate.wait_durable(seq, seen) >= seq:
            return
        with self._lock:
            self._wait_durable(seq)

    def _wait_durable(self, seq: int) -> None:
        while self._durable < seq:
            self._check()
            if self._flushing or self._gathering:
                self._await_flush()
            else:
                if self._last_flush_records > 1:
                    self._gather()
                self._flush(sync=True)

    def _await_flush(self) -> None:
        """Sleeps (lock released, in C without the GIL) until a flush finishes."""
        seen = self._gate.generation()
        self._lock.release()
        try:
            self._gate.wait(seen)
        finally:
            self._lock.acquire()

    def _gather(self) -> None:
        """Several threads fed the last flush: the GIL would let this one lead alone
        again before the woken ones append, so give them a moment (lock released)
        to add their records to this flush. A lone writer never waits here."""
        self._gathering = True
        try:
            self._gather_cond.wait(self._gather_seconds)
        finally:
            self._gathering = False

    def sync(self) -> None:
        with self._lock:
            self._wait_durable(self._appended)

    def run_quiesced(self, action: Callable[[], object]):
        """Runs ``action()`` with the append lock held, every append written out
        (not necessarily synced) and no write in flight, so the files hold all
        the records the state knows of (a reload after a compaction swap)."""
        with self._lock:
            while self._fill or self._flushing:
                self._flush(sync=False)
            self._check()
            return action()

    # --- flushing (call with the lock held; drops it around the I/O) ---------------------
    def _flush(self, sync: bool) -> None:
        while self._flushing:
            self._await_flush()
        self._check()
        buf, fill, upto, out = self._buf, self._fill, self._appended, self._out
        length = layout.align_up(fill, self.block)
        if fill == 0 and (not sync or self._durable == self._written == upto):
            return
        # Crossing the window: what is already written is synced before this write.
        sync_first = bool(length) and self._unsynced > 0 and self._unsynced + length > self.window
        offset = self._file_pos
        buf[fill:length] = bytes(length - fill)
        self._buf, self._spare = self._spare, buf
        self._fill = 0
        if fill:
            self._data_end = offset + fill
        self._file_pos += length
        self._first_unflushed_at = 0.0
        self._io(out, memoryview(buf)[:length], offset, length, upto, sync, sync_first)

    def _io(self, out, data, offset: int, length: int, upto: int, sync: bool,
            sync_first: bool, seal: Callable[[], None] | None = None) -> None:
        """Writes ``data`` (``length`` bytes, may be 0) at ``offset`` with the lock
        released, syncing first and/or after as asked (a record written alone
        with its ``seal``: SequentialFile.write_alone); then accounts appends up
        to ``upto`` as written (and durable if synced). Call with the lock held
        and no flush running; a failure poisons the appender and raises."""
        self._flushing = True
        self._lock.release()
        failure = None
        try:
            if sync_first:
                out.sync()
            if seal is not None:
                out.write_alone(data, offset, seal)
            elif length and sync:
                out.write_durably(data, offset)
            elif length:
                out.write(data, offset)
            elif sync:
                out.sync()
        except BaseException as error:  # noqa: BLE001 - poison, then re-raise in every caller
            failure = error
        finally:
            self._lock.acquire()
            self._flushing = False
        if failure is not None:
            self._failure = failure
            self._gate.advance()
            self._timer.notify()
            self._check()
        self._last_flush_records = upto - self._written
        self._written = upto
        if sync:
            self._unsynced = 0
            self._durable = upto
            self.stats["syncs"] += 1
        else:
            self._unsynced = (0 if sync_first else self._unsynced) + length
        self.stats["syncs"] += sync_first
        self.stats["flushes"] += 1
        self.stats["bytes"] += length
        self._gate.advance(self._durable)

    def _roll(self) -> None:
        """Seals the current file (flush + sync) and moves to the next one."""
        self._flush(sync=True)
        sealed_end = self._data_end
        old = self._out
        data_file, header = self.files.roll(sealed_end)
        self._out = self.factory.open(data_file.path)
        old.close()
        self._out.write(header, 0)
        self._file_pos = self._data_end = layout.FILE_HEADER_SIZE
        self._unsynced = layout.FILE_HEADER_SIZE
        self.stats["rolls"] += 1
        if self.on_roll is not None:
            self.on_roll()
        self.files.prepare_next()            # the file after this one, off the append path

    # --- timed flushes and shutdown -----------------------------------------------------------
    def _timed_flushes(self) -> None:
        with self._lock:
            while not self._closed and self._failure is None:
                if not self._first_unflushed_at:
                    self._timer.wait()
                    continue
                due = self._first_unflushed_at + self._timeout - time.monotonic()
                if due > 0:
                    self._timer.wait(due)
                    continue
                try:
                    self._flush(sync=False)
                except BaseException:  # noqa: BLE001 - recorded as the failure; callers see it
                    return

    def close(self) -> None:
        """Writes and syncs everything appended, then closes the file."""
        with self._lock:
            if self._closed:
                return
            try:
                if self._failure is None:
                    self._wait_durable(self._appended)
            finally:
                self._closed = True
                self._gate.advance()
                self._timer.notify()
        self._flusher.join()
        self._out.close()
        self._gate.close()
        self._stage.release()

    @property
    def position(self) -> tuple[int, int]:
        """(current file id, offset the next flush writes at)."""
        return self.files.current.file_id, self._file_pos + self._fill
