"""Deferred CRC checks: a read-only snapshot may check big data records when
their bodies are read instead of when the lane is loaded.

Why: a full read touches every byte twice, once for the CRC pass of the load
and once when the body is handed on (to Spark). Checked when it is read, a
body is still in the CPU cache when it is handed on, and the first batch is
ready without waiting for a pass over the whole lane (measured: 2M events
through Spark, 2-3 % faster in rounds paired against the check at load; ~7 ms
instead of ~31-45 ms to a lane's first batch). Only snapshots ask for it
(``Journal.read(..., defer_crc=True)``: the lane scan of the readers); a writer
and recovery mode always check everything at load.

Contract: every record is checked before a result that depends on it is final.

* Only records that cannot be torn are deferred: those of files *before* the
  newest file with data. A writer syncs a file before its first write into the
  next one (FORMAT.md, "Reading: where data ends"), so there any mismatch is
  damage, never the end of the data, and loading needs no CRC to find where the
  data ends. The newest file with data (and any after it) is scanned with CRCs.
* Only ADD / UPDATE bodies (plain or transactional) of at least
  ``DEFER_MIN_BODY`` bytes are deferred, in files where they hold most of the
  data; every other record of the file (transaction control, deletes, small
  records) is checked at load, one by one. A file that does not qualify, or
  where the structural scan finds anything foreign, is scanned again with CRCs,
  so damage found at load is reported exactly as a full check reports it.
* ``check`` verifies a deferred record when its body is read (JournalSnapshot);
  a mismatch raises CorruptJournalError naming the file and offset.
  ``check_rest`` verifies every deferred record not read; a reader calls it
  when it has yielded everything, so a read that completes has checked every
  record its visibility depended on.
* What an unchecked header can do: a deferred record reads as ADD or UPDATE
  (anything else is checked at load), so damage in its header can only make
  that record visible, which its own check catches when it is read, or hide
  other records (replace them, break their transaction's count), which
  ``check_rest`` catches. It can never make another record visible. A read
  stopped early (Spark's ``limit``) has checked everything it yielded, but may
  have missed rows such damage hid.

Crash behaviour: nothing is written; the snapshot's read hold keeps the files
from being reclaimed or swapped while checks are pending.
"""
from __future__ import annotations

from ..errors import CorruptJournalError
from ..format import layout
from ..format.codec import CODEC

DEFER_MIN_BODY = 64 << 10     # a body at least this big may be deferred ...
DEFER_MIN_SHARE = 0.75        # ... in a file where such bodies hold this share of the data ...
MAX_CHECKED_NOW = 256         # ... and at most this many other records are checked one by one
DEFERRABLE_TYPES = frozenset((layout.ADD, layout.UPDATE, layout.ADD_TX, layout.UPDATE_TX))


def scan_deferring(files: list) -> None:
    """Scans every LoadedFile of ``files`` (file id order), setting its scan
    and its ``deferred_crc``: {offset: body length} of the records whose CRC
    check is deferred (module doc)."""
    newest = len(files) - 1
    while newest >= 0:                  # the newest file with data, and any after it
        file = files[newest]
        file.scan = file.mapped.scan(file.file_id, True)
        if file.scan.n:
            break
        newest -= 1
    for file in files[:max(newest, 0)]:
        scan = file.mapped.scan(file.file_id, False)
        deferred = _deferrable(file, scan)
        if deferred is None:
            scan = file.mapped.scan(file.file_id, True)
        file.scan, file.deferred_crc = scan, deferred or {}


def check_all_now(files: list) -> None:
    """Undoes the deferral: every file scanned again with CRCs."""
    for file in files:
        if file.deferred_crc:
            file.scan, file.deferred_crc = file.mapped.scan(file.file_id, True), {}


def _deferrable(file, scan) -> dict[int, int] | None:
    """{offset: body length} to defer in a file before the newest with data,
    after checking its other records; None: scan it with CRCs instead."""
    data_bytes = scan.clean_end - layout.FILE_HEADER_SIZE
    if scan.n == 0 or scan.damaged or file.size_damage or \
            (file.header.sealed_end and scan.clean_end != file.header.sealed_end) or \
            scan.n > MAX_CHECKED_NOW + data_bytes // DEFER_MIN_BODY:
        return None
    deferred, others = {}, []
    for index in range(scan.n):
        offset, body_len = scan.offsets[index], scan.body_lens[index]
        if scan.types[index] in DEFERRABLE_TYPES and body_len >= DEFER_MIN_BODY:
            deferred[offset] = body_len
        else:
            others.append((offset, body_len))
    if len(others) > MAX_CHECKED_NOW or sum(deferred.values()) < DEFER_MIN_SHARE * data_bytes:
        return None
    view = file.mapped.view
    if not all(CODEC.record_crc_ok(view, offset, body_len) for offset, body_len in others):
        return None
    return deferred


class DeferredChecks:
    """The deferred checks of one snapshot, taken over from its LoadedFiles."""

    def __init__(self, files: list, paths: dict[int, str]):
        self._pending = {f.file_id: f.deferred_crc for f in files if f.deferred_crc}
        self._paths = paths                      # {file id: path}, the snapshot's

    def check(self, file_id: int, offset: int, view) -> None:
        """Verifies the record at ``offset`` of the file (``view``: its bytes)
        if its check is still pending."""
        waiting = self._pending.get(file_id)
        body_len = waiting.get(offset) if waiting else None
        if body_len is not None:
            if not CODEC.record_crc_ok(view, offset, body_len):
                raise self._damage(file_id, offset)     # still pending: a second read fails too
            del waiting[offset]

    def check_rest(self, view_of) -> int:
        """Verifies every pending record (``view_of(file id)``: the file's
        bytes); returns how many it checked."""
        checked = 0
        for file_id, waiting in self._pending.items():
            view = view_of(file_id)
            for offset, body_len in sorted(waiting.items()):
                if not CODEC.record_crc_ok(view, offset, body_len):
                    raise self._damage(file_id, offset)
                checked += 1
            waiting.clear()
        return checked

    def _damage(self, file_id: int, offset: int) -> CorruptJournalError:
        return CorruptJournalError(self._paths[file_id], offset,
                                   "crc mismatch (found when the record was checked after "
                                   "the load: its file is sealed, so this is damage)")
