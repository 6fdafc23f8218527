"""Opening a lane: scan every data file, decide where data ends, replay.

Contract (FORMAT.md, "Reading: where data ends"): a torn tail of the newest file
is end of data and is reported; damage anywhere else fails the load with
CorruptJournalError naming file and offset, unless recovery is asked for, which
moves the damaged file to attic/ and reports exactly what was lost. The loader
itself changes nothing on disk except, for a writer, moving files with bad
headers to the attic and deleting ``data-*.tmp`` leftovers (both crash debris).

Which files a lane holds comes from swap.lane_view: a compaction whose control
file is durable counts as done even if its swap was cut short. A file written
whole by compaction records its exact end of data in its header; data ending
anywhere else is damage, wherever the file stands.
"""
from __future__ import annotations

import dataclasses
import os
import shutil

from ..errors import CorruptJournalError, TransactionError
from ..format import layout
from ..io.io_rate import UNCAPPED, IoRate
from ..io.modes import make_dirs
from ..io.paced_read import prefetch
from .datafile import BadHeader, FileHeader, MappedFile, WrongSize, is_data_file_debris, read_header
from .deferred_crc import check_all_now, scan_deferring
from .free_by_header import empty_scan, free_ids
from .inside import check_inside
from .records import LoadReport, Recovery, TornTail
from .state import JournalState
from .swap import ControlFile, lane_view

ATTIC = "attic"


@dataclasses.dataclass
class LoadedFile:
    path: str
    header: FileHeader
    mapped: MappedFile
    scan: object                   # the codec's ScanResult
    n_data: int                    # scan records that are data (the rest were dropped)
    end: int                       # end of data: the writer appends after it
    torn_end: int = 0              # writer zeroes [end, torn_end) before appending
    size_damage: str = ""          # not its header's size, and it holds records: damaged
    deferred_crc: dict = dataclasses.field(default_factory=dict)   # deferred_crc.py

    @property
    def file_id(self) -> int:
        return self.header.file_id


@dataclasses.dataclass
class LoadedJournal:
    directory: str
    files: list                    # LoadedFile in file id order
    state: JournalState
    report: LoadReport
    pending_swap: ControlFile | None = None    # a committed compaction not swapped in yet


def move_to_attic(directory: str, path: str) -> str:
    attic = check_inside(directory, ATTIC, "the attic folder")
    make_dirs(attic)
    target = os.path.join(attic, os.path.basename(path))
    while os.path.exists(target):
        target += ".1"
    shutil.move(path, target)
    return target


def load(directory: str, *, verify_crc: bool = True, writable: bool = False,
         recover: bool = False, defer_crc: bool = False) -> LoadedJournal:
    """``defer_crc``: a read-only load may leave the CRC checks of big data
    records in sealed files to their reader (deferred_crc.py); ignored for a
    writer, in recovery mode and without ``verify_crc``."""
    report = LoadReport()
    files, pending_swap, damaged = scan_lane(
        directory, report, verify_crc=verify_crc, writable=writable, recover=recover,
        defer_crc=defer_crc and verify_crc and not writable and not recover)
    damaged_ids = {file.file_id for file, _offset, _detail in damaged}
    state = replay(f for f in files if f.file_id not in damaged_ids)
    # Ids once handed out are never handed out again, even when every record
    # that carried them was deleted and its file reclaimed or compacted away:
    # streaming readers use record ids as offsets.
    state.max_record_id, state.max_tx_id = watermarks(files, state.max_record_id, state.max_tx_id)
    if damaged:
        # Loss is judged against every valid record of a damaged file, those after
        # the damage included (n_data stops at the damage).
        for file, _offset, _detail in damaged:
            file.n_data = file.scan.n
        # ... and with every COMMIT applied: a count that no longer matches is
        # the damage itself, and the transaction's records were lost to it.
        full = replay(files, check_counts=False)
        for file, offset, detail in damaged:
            files.remove(file)
            file.mapped.close()
            moved = move_to_attic(directory, file.path) if writable else file.path
            report.recoveries.append(_what_was_lost(full, state, file, moved, offset, detail))
    report.files = len(files)
    report.records_scanned = sum(f.n_data for f in files)
    report.bytes_scanned = sum(f.end for f in files)
    report.crc_deferred = sum(len(f.deferred_crc) for f in files)
    report.live_records = len(state.live)
    report.prepared_tx_ids = [t.tx_id for t in state.txs.values() if t.prepared]
    report.broken_tx_ids = list(state.broken_tx_ids)
    return LoadedJournal(directory, files, state, report, pending_swap)


def scan_lane(directory: str, report: LoadReport, *, verify_crc: bool = True,
              writable: bool = False, recover: bool = False,
              defer_crc: bool = False,
              read_rate: IoRate = UNCAPPED) -> tuple[list, ControlFile | None, list]:
    """The first half of ``load``, without the replay: opens and scans every
    data file and sets where each one's data ends. Returns (files in file id
    order, the pending swap, [(file, offset, detail)] damaged); damage fails
    with CorruptJournalError unless ``recover``. With a capped ``read_rate``
    (a maintenance pass's) the files scanned are first read into the page
    cache at that rate (io/paced_read.py); free files are never read."""
    files, pending_swap = _open_files(directory, writable, report)
    scanned = _to_scan(files)
    prefetch([f.path for f in scanned], read_rate)
    if defer_crc:
        scan_deferring(scanned)
    else:
        _scan_all(scanned, verify_crc)
    damaged = _classify(files, report)
    if damaged and any(f.deferred_crc for f in files):
        # Damage is judged, and reported, exactly as a load that checks everything does.
        check_all_now(files)
        damaged = _classify(files, report)
    if damaged and not recover:
        file, offset, detail = damaged[0]
        raise CorruptJournalError(file.path, offset, detail)
    return files, pending_swap, damaged


def prefetch_lane(directory: str, rate: IoRate) -> int:
    """Reads the files a load of the lane scans into the page cache at
    ``rate``, for a maintenance pass that loads the lane more than once
    (paging: once per page) and pays for its reads once, at its start; the
    bytes asked for (0 uncapped). Opening the files judges them as a load
    does."""
    if not rate.capped:
        return 0
    files, _pending_swap = _open_files(directory, False, LoadReport())
    try:
        return prefetch([f.path for f in _to_scan(files)], rate)
    finally:
        for file in files:
            file.mapped.close()


def _to_scan(files: list) -> list:
    """The opened files a load scans; the free ones (by header) get an empty scan."""
    free = free_ids(f.header for f in files)
    for file in files:
        if file.file_id in free:
            file.scan = empty_scan()
    return [f for f in files if f.file_id not in free]


def _open_files(directory: str, writable: bool, report: LoadReport) -> tuple[list, ControlFile | None]:
    if writable:
        for name in os.listdir(directory):
            if is_data_file_debris(name):
                os.unlink(os.path.join(directory, name))     # a data file never finished
    paths, pending_swap = lane_view(directory)
    files = []
    seen_ids: dict[int, str] = {}
    for path in paths:
        damage = ""
        try:
            header = read_header(path)
        except FileNotFoundError as error:
            raise vanished(path) from error
        except WrongSize as bad:
            # A file of the wrong size that holds records of its own lost some
            # (or gained bytes nobody wrote): damage, never a silent skip. One
            # that holds none (a pool file) goes aside like a bad header.
            if not _holds_records(path, bad.header):
                _set_aside(directory, path, bad, writable, report)
                continue
            how = ("cut it short (records past that cannot be listed)"
                   if bad.actual < bad.header.file_size else "appended to it")
            header, damage = bad.header, (f"the file is {bad.actual} bytes but its header says "
                                          f"{bad.header.file_size}: something outside "
                                          f"sparkjournal {how}")
        except BadHeader as bad:
            _set_aside(directory, path, bad, writable, report)
            continue
        if header.file_id in seen_ids:
            raise CorruptJournalError(path, 16, f"file id {header.file_id} is also the id of "
                                      f"{seen_ids[header.file_id]}")
        seen_ids[header.file_id] = path
        files.append((header, path, damage))
    files.sort(key=lambda entry: entry[0].file_id)
    loaded = []
    for header, path, size_damage in files:
        try:
            mapped = MappedFile(path)
        except FileNotFoundError as error:
            raise vanished(path) from error
        loaded.append(LoadedFile(path, header, mapped, None, 0, layout.FILE_HEADER_SIZE,
                                 size_damage=size_damage))
    return loaded, pending_swap


def vanished(path: str) -> CorruptJournalError:
    """A data file listed a moment ago is gone: only something outside
    sparkjournal removes data files while the file-set lock is held shared."""
    return CorruptJournalError(path, 0, "the data file disappeared while the lane was being "
                               "opened (removed by something other than sparkjournal)")


def _holds_records(path: str, header: FileHeader) -> bool:
    mapped = MappedFile(path)
    try:
        return mapped.scan(header.file_id, verify_crc=True).n > 0
    finally:
        mapped.close()


def _set_aside(directory: str, path: str, bad: BadHeader, writable: bool, report: LoadReport) -> None:
    if writable:
        report.attic.append(move_to_attic(directory, path))
    report.warnings.append(f"{path}: {bad}; " + ("moved to attic/" if writable else "skipped"))


def _scan_all(files: list, verify_crc: bool) -> None:
    for file in files:
        file.scan = file.mapped.scan(file.file_id, verify_crc)


def own_record_at(view, offset: int, file_id32: int) -> bool:
    """Does a record of this file, valid in all but its CRC, begin at ``offset``
    (a torn or damaged record of the file, FORMAT.md)? Stale bytes of an
    earlier use carry another file id in their headers, but their bodies may
    hold anything: eight bytes that only happen to match the file id at a
    header's place are no record."""
    if offset < 0 or offset + layout.RECORD_HEADER_SIZE > len(view):
        return False
    _, rtype, flags, _, file_id, body_len, *_ = layout.RECORD_HEADER.unpack_from(view, offset)
    return (file_id == file_id32 and rtype in layout.TYPE_NAMES and not flags & ~layout.KNOWN_FLAGS
            and offset + layout.record_size(body_len) <= len(view))


def _classify(files: list, report: LoadReport) -> list:
    """Sets each file's data range; returns [(file, offset, detail)] damaged."""
    damaged = []
    newest_with_data = max((i for i, f in enumerate(files) if f.scan.n), default=-1)
    by_id = {f.file_id: f for f in files}
    for index, file in enumerate(files):
        scan = file.scan
        file.n_data, file.end = scan.n_clean, scan.clean_end
        if file.size_damage:
            damaged.append((file, min(scan.clean_end, len(file.mapped.view)), file.size_damage))
            continue
        after = scan.n - scan.n_clean
        sealed_end = file.header.sealed_end
        if sealed_end and (after or scan.clean_end != sealed_end):
            damaged.append((file, scan.clean_end, f"the file was written whole with data up to "
                            f"{sealed_end}, but its clean data ends at {scan.clean_end}"
                            + (f" ({scan.foreign_reason})" if scan.foreign_reason else "")))
            continue
        sealed = index < newest_with_data
        if after:
            last = scan.n - 1
            last_end = scan.offsets[last] + layout.record_size(scan.body_lens[last])
            within_window = last_end - scan.first_foreign <= file.header.sync_window
            if sealed or not within_window:
                damaged.append((file, scan.first_foreign, f"{scan.foreign_reason}, and "
                                f"{after} valid records follow it"))
                continue
            report.torn_tail = TornTail(file.path, scan.clean_end, after, last_end - scan.clean_end)
            file.torn_end = last_end
        elif own_record_at(file.mapped.view, scan.first_foreign, layout.file_id32(file.file_id)):
            if sealed:
                damaged.append((file, scan.first_foreign, scan.foreign_reason))
                continue
            report.torn_tail = TornTail(file.path, scan.clean_end, 0, 0)
    for file in files:
        header = file.header
        previous = by_id.get(header.prev_file_id) if header.prev_file_id else None
        # A file written whole by compaction guards its own end (sealed_end) and
        # may reuse the id of the file this header once followed.
        if previous is not None and not previous.header.sealed_end and \
                previous.end < header.prev_end and \
                previous.file_id not in {d[0].file_id for d in damaged}:
            damaged.append((previous, previous.end, f"data ends at {previous.end} but "
                            f"{file.path} records that it ended at {header.prev_end}"))
    return damaged


def replay(files, check_counts: bool = True) -> JournalState:
    state = JournalState()
    for file in files:
        _replay_file(state, file, check_counts)
    return state


def _replay_file(state: JournalState, file: LoadedFile, check_counts: bool = True) -> None:
    scan, fid, view = file.scan, file.file_id, file.mapped.view
    n = file.n_data
    state.file(fid).records += n
    columns = zip(scan.types[:n].tolist(), scan.flags[:n].tolist(), scan.user_types[:n].tolist(),
                  scan.record_ids[:n].tolist(), scan.tx_ids[:n].tolist(),
                  scan.offsets[:n].tolist(), scan.body_lens[:n].tolist(), scan.counts[:n].tolist())
    offset = layout.FILE_HEADER_SIZE
    try:
        for rtype, flags, user_type, record_id, tx_id, offset, body_len, count in columns:
            if rtype <= layout.DELETE:
                if rtype == layout.DELETE:
                    state.delete(record_id, fid)
                else:
                    state.put(record_id, _version(view, fid, offset, body_len, user_type, flags))
            elif rtype <= layout.DELETE_TX:
                version = None if rtype == layout.DELETE_TX else \
                    _version(view, fid, offset, body_len, user_type, flags)
                state.tx_record(tx_id, rtype, record_id, fid, version)
            elif rtype == layout.PREPARE:
                body = offset + layout.RECORD_HEADER_SIZE
                state.prepare(tx_id, bytes(view[body:body + body_len]), fid)
            elif tx_id in state.txs:
                # COMMIT applies only when its per-file count matches (Artemis's
                # rule); otherwise records are missing and the tx is not applied.
                if rtype == layout.COMMIT and (state.count_in(tx_id, fid) == count or not check_counts):
                    state.commit(tx_id, fid)
                else:
                    state.rollback(tx_id, fid)
                    if rtype == layout.COMMIT:
                        state.broken_tx_ids.append(tx_id)
    except TransactionError as error:
        raise out_of_order(file.path, offset, str(error)) from None


def out_of_order(path: str, offset: int, what: str) -> CorruptJournalError:
    """Records no writer writes (one after its tx's PREPARE, a second PREPARE)
    under a right CRC: damage, named like any other."""
    return CorruptJournalError(path, offset, f"transaction record out of order: {what}")


def watermarks(files, max_record_id: int, max_tx_id: int) -> tuple[int, int]:
    """The highest record and tx ids ever handed out: those the replay saw and
    every header's watermark."""
    return (max([max_record_id] + [f.header.max_record_id for f in files]),
            max([max_tx_id] + [f.header.max_tx_id for f in files]))


def _version(view, fid, offset, body_len, user_type, flags) -> tuple:
    large_id = 0
    if flags & layout.FLAG_LARGE:
        # A reference of another length names no body (-1); reading it fails
        # with CorruptJournalError (LargeStore.read).
        large_id = -1 if body_len != layout.LARGE_REF.size else \
            layout.LARGE_REF.unpack_from(view, offset + layout.RECORD_HEADER_SIZE)[0]
    return (fid, offset, body_len, user_type, large_id)


def _what_was_lost(full: JournalState, kept: JournalState, file: LoadedFile,
                   moved_to: str, offset: int, detail: str) -> Recovery:
    lost = [rid for rid, v in full.live.items() if kept.live.get(rid) != v]
    lost += [rid for rid in kept.live if rid not in full.live]      # a DELETE that was lost
    lost_tx = sorted(set(file.scan.tx_ids.tolist()) - {0})
    # A transaction of this file still without an outcome may have lost its
    # COMMIT to the damage: its records count as lost too.
    for tx_id in lost_tx:
        tx = full.txs.get(tx_id)
        if tx is not None and not tx.prepared:
            lost += [record[1] for record in tx.records]
    return Recovery(file.path, moved_to, offset, detail, sorted(set(lost)), lost_tx)
