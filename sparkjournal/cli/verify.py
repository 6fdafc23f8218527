"""``sparkjournal verify PATH``: check every record of every file of every lane.

Two independent looks at each lane, both read-only and lock-free:
1. the loader's verdict: ``loader.load(writable=False)``; a CorruptJournalError
   is exactly what opening the lane would refuse (its first damage);
2. an explicit scan of every data file that reports ALL damage, not just the
   first: inside a file's data every byte is either a valid record of that file
   or zero padding (the writer writes each file sequentially from its header),
   so every non-zero stretch between valid records is a damaged region.
A region is classified with the loader's rules (FORMAT.md, "Reading: where data
ends"): in the newest file with data, records ending within the header's sync
window of the first damage make a *torn tail* (reported, not corruption);
anything else before the tail, an own damaged record at the end of a sealed
file, or a sealed file ending before its successor's "previous file's end" is
corruption. A data file whose header fails its CRC (or whose size disagrees
with it) is reported as corruption too, although the loader only moves such a
file to attic/ with a warning: its records would be lost without an error.
Large bodies referenced by live or prepared records are checked against the
size and CRC-32C of their reference. In a lane of events, page files named by
live PAGE records (events/page_records.py) are checked against their record: present, size,
CRC-32C of the whole file, and the Parquet footer (page_scan.footer_problems:
row counts, the metadata columns and their types, a footer that does not
decode; not the data); a difference is corruption (their events are nowhere else). Page files
no live PAGE record (nor a pending page request) names are reported as
orphans, which is not an error: no reader opens them and the next paging run
removes them.

Exit status 0 when clean (a torn tail or an orphan alone is clean), 1 on any
corruption.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import time

import pyarrow as pa
import pyarrow.compute as pc

from ..config import load_config
from ..errors import CorruptJournalError, FormatVersionError
from ..events.page_records import PAGE, PageRecordError, decode, holds_events
from ..events.page_scan import check_page_file
from ..format import layout
from ..journal.datafile import BadHeader, MappedFile, is_data_file_name, read_header
from ..journal.large import LargeStore
from ..journal.batch import record_sizes
from ..journal.journal import JournalSnapshot
from ..journal.loader import load, own_record_at
from ..journal.state import V_FILE, V_LARGE, V_OFFSET
from ..maintenance.paging import page_files, requested_pages
from ..units import human_bytes, percent, plural
from .paths import find_lanes


@dataclasses.dataclass
class Finding:
    kind: str            # "corrupt" | "torn tail" | "warning" | "orphan"
    path: str
    offset: int | None   # None: the whole file (a page file)
    detail: str

    def line(self) -> str:
        label = {"corrupt": "CORRUPT", "torn tail": "TORN TAIL", "warning": "WARNING",
                 "orphan": "ORPHAN"}[self.kind]
        where = "" if self.offset is None else f" offset {self.offset}"
        return f"  {label:<9} {self.path}{where}: {self.detail}"


@dataclasses.dataclass
class ScannedFile:
    path: str
    header: object
    mapped: MappedFile
    scan: object
    gaps: list           # [(start, end)] non-zero stretches between/after own records
    last_end: int        # end of the last valid own record (4096 if none)


class Progress:
    """Progress lines on stderr: one after every ``step`` bytes checked (0:
    after every file), with the percentage of the whole journal."""

    def __init__(self, total_files: int, total_bytes: int, step_mb: int, quiet: bool):
        self.total_files, self.total_bytes = total_files, total_bytes
        self.step, self.quiet = step_mb << 20, quiet
        self.files = self.bytes = self._reported = 0

    def advance(self, nbytes: int) -> None:
        self.files += 1
        self.bytes += nbytes
        if self.quiet or self.bytes - self._reported < max(self.step, 1) and self.step:
            return
        self._reported = self.bytes
        print(f"verify: {percent(self.bytes, self.total_bytes)} ({self.files} of {self.total_files} "
              f"files, {human_bytes(self.bytes)} of {human_bytes(self.total_bytes)})",
              file=sys.stderr, flush=True)


def _column(values, n: int) -> pa.Array:
    return pa.Array.from_buffers(pa.uint64(), n, [None, pa.py_buffer(values)])


def scan_file(path: str, header) -> ScannedFile:
    mapped = MappedFile(path)
    scan = mapped.scan(header.file_id, True)
    view, n = mapped.view, scan.n
    gaps, ends = [], []
    if n:
        offsets = _column(scan.offsets, n).cast(pa.int64())
        lens = pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(scan.body_lens)])
        ends = pc.add(offsets, record_sizes(lens))
        starts = pa.concat_arrays([pa.array([layout.FILE_HEADER_SIZE], pa.int64()), ends.slice(0, n - 1)])
        for index in pc.indices_nonzero(pc.not_equal(offsets, starts)).to_pylist():
            start, stop = starts[index].as_py(), offsets[index].as_py()
            first = _first_nonzero(view, start, stop)
            if first is not None:
                gaps.append((first, stop))
    last_end = ends[-1].as_py() if n else layout.FILE_HEADER_SIZE
    return ScannedFile(path, header, mapped, scan, gaps, last_end)


def _first_nonzero(view, start: int, stop: int) -> int | None:
    chunk = bytes(view[start:stop])
    rest = chunk.lstrip(b"\0")
    return None if not rest else start + ((len(chunk) - len(rest)) & ~(layout.RECORD_ALIGN - 1))


def describe(view, offset: int, file_id32: int) -> str:
    """Why the bytes at ``offset`` are not a valid record of this file."""
    if offset + layout.RECORD_HEADER_SIZE > len(view):
        return "partial record header at the end of the file"
    crc, rtype, flags, _user, fid, body_len, record_id, tx_id, _c, _cc = \
        layout.RECORD_HEADER.unpack_from(view, offset)
    if rtype not in layout.TYPE_NAMES:
        return f"byte {rtype} is not a record type"
    if flags & ~layout.KNOWN_FLAGS:
        return f"unknown flag bits {flags:#x}"
    if offset + layout.RECORD_HEADER_SIZE + body_len > len(view):
        return f"body length {body_len} runs past the end of the file"
    if fid != file_id32:
        return f"a record of file id {fid}, not this file's {file_id32}"
    return (f"record checksum mismatch ({layout.TYPE_NAMES[rtype]} record id {record_id}"
            + (f", tx {tx_id}" if tx_id else "") + ")")


def classify(files: list, findings: list) -> None:
    """Applies the loader's torn-tail vs corruption rules to every file's gaps."""
    newest = max((i for i, f in enumerate(files) if f.scan.n), default=-1)
    by_id = {f.header.file_id: f for f in files}
    for index, file in enumerate(files):
        scan, fid32 = file.scan, layout.file_id32(file.header.file_id)
        torn = (index == newest and file.gaps and
                file.last_end - file.gaps[0][0] <= file.header.sync_window)
        for start, _stop in file.gaps:
            reason = scan.foreign_reason if start == scan.first_foreign else describe(file.mapped.view, start, fid32)
            if torn:
                findings.append(Finding("torn tail", file.path, start, f"{reason}; the records after it "
                                        f"were never acknowledged and are dropped at the next open"))
            else:
                findings.append(Finding("corrupt", file.path, start, reason + (
                    ", in a sealed file" if index < newest else ", beyond the sync window")))
        tail = _first_nonzero(file.mapped.view, file.last_end,
                              min(len(file.mapped.view), file.last_end + layout.RECORD_HEADER_SIZE))
        if tail is not None and own_record_at(file.mapped.view, tail, fid32):
            if index < newest:
                findings.append(Finding("corrupt", file.path, tail, describe(file.mapped.view, tail, fid32)
                                        + ", at the end of a sealed file"))
            elif not torn:
                findings.append(Finding("torn tail", file.path, tail, "a partly written last record "
                                        "(never acknowledged; dropped at the next open)"))
        previous = by_id.get(file.header.prev_file_id) if file.header.prev_file_id else None
        if previous is not None and previous.last_end < file.header.prev_end and not previous.gaps:
            findings.append(Finding("corrupt", previous.path, previous.last_end,
                                    f"data ends at {previous.last_end} but {os.path.basename(file.path)} "
                                    f"records that it ended at {file.header.prev_end}"))


def check_large_bodies(lane_dir: str, loaded, findings: list) -> tuple[int, int]:
    """Checks every body a live or prepared record references; (count, bytes)."""
    views = {f.file_id: f.mapped.view for f in loaded.files}
    versions = [(rid, v) for rid, v in loaded.state.live.items() if v[V_LARGE]]
    for tx in loaded.state.txs.values():
        versions += [(rid, v) for _t, rid, v, _f in tx.records if v and v[V_LARGE]]
    store, count, nbytes = LargeStore(lane_dir, create=False), 0, 0
    for record_id, version in versions:
        start = version[V_OFFSET] + layout.RECORD_HEADER_SIZE
        ref = bytes(views[version[V_FILE]][start:start + layout.LARGE_REF.size])
        try:
            body = store.read(ref, verify=True)
            count, nbytes = count + 1, nbytes + len(body)
            body.release()
        except FileNotFoundError:
            findings.append(Finding("corrupt", store.path(version[V_LARGE]), 0,
                                    f"the large body of record {record_id} is missing"))
        except CorruptJournalError as error:
            findings.append(Finding("corrupt", error.path, error.offset,
                                    f"{error.detail} (record {record_id})"))
    return count, nbytes


def check_pages(lane_dir: str, loaded, findings: list) -> tuple[int, int]:
    """Checks every page file a live PAGE record names; reports orphans;
    (page files checked, their bytes)."""
    lane, named, count, nbytes = os.path.basename(lane_dir), requested_pages(lane_dir), 0, 0
    snapshot = JournalSnapshot(lane_dir, load_config(), loaded)    # bodies only; files stay
    for record in snapshot.records():
        if record.user_type != PAGE:
            continue
        try:
            ref = decode(record.body)
        except PageRecordError as error:
            findings.append(Finding("corrupt", lane_dir, None, f"lane {lane}: PAGE record "
                                    f"{record.record_id} does not decode: {error}"))
            continue
        except FormatVersionError as newer:
            findings.append(Finding("corrupt", lane_dir, None, f"lane {lane}: PAGE record "
                                    f"{record.record_id} not checked: {newer}"))
            continue
        named.add(ref.name)
        problems = check_page_file(lane_dir, ref)
        if problems:
            findings.append(Finding("corrupt", ref.path(lane_dir), None, (
                f"lane {lane}: page file of PAGE record {record.record_id}: "
                + "; ".join(problems) + ". Its events are nowhere else (paging moved them "
                "there): restore the file from a backup before reading this lane")))
        count, nbytes = count + 1, nbytes + ref.size
    for name in page_files(lane_dir, with_tmp=True):
        if name not in named:
            findings.append(Finding("orphan", os.path.join(lane_dir, "pages", name), None,
                                    f"lane {lane}: no live PAGE record names it (a paging killed "
                                    f"before its commit, an abandoned or a dropped page); never "
                                    f"read; the next paging run (sparkjournal page or compact) "
                                    f"removes it"))
    return count, nbytes


def verify_lane(lane_dir: str, progress: Progress, findings: list) -> dict:
    loaded, loader_error = None, None
    try:
        loaded = load(lane_dir, verify_crc=True, writable=False)
    except CorruptJournalError as error:
        loader_error = error
        try:
            loaded = load(lane_dir, verify_crc=True, writable=False, recover=True)
        except CorruptJournalError:
            loaded = None
    files = []
    for name in sorted(n for n in os.listdir(lane_dir) if is_data_file_name(n)):
        path = os.path.join(lane_dir, name)
        try:
            header = read_header(path)
        except BadHeader as bad:
            findings.append(Finding("corrupt", path, 0, f"file header: {bad} (a writer moves this "
                                    f"file to attic/ and every record in it is lost)"))
            progress.advance(os.path.getsize(path))
            continue
        except FormatVersionError as newer:
            findings.append(Finding("corrupt", path, 8, f"not checked: {newer}"))
            progress.advance(os.path.getsize(path))
            continue
        files.append(scan_file(path, header))
        progress.advance(header.file_size)
    files.sort(key=lambda f: f.header.file_id)
    start = len(findings)
    classify(files, findings)
    counted = {"files": len(files), "records": sum(f.scan.n for f in files),
               "bytes": sum(f.header.file_size for f in files), "large_bodies": 0, "large_bytes": 0,
               "pages": 0, "page_bytes": 0}
    for file in files:
        file.mapped.close()
    if loaded is not None:
        counted["large_bodies"], counted["large_bytes"] = check_large_bodies(lane_dir, loaded, findings)
        if holds_events(lane_dir):
            counted["pages"], counted["page_bytes"] = check_pages(lane_dir, loaded, findings)
        for file in loaded.files:
            file.mapped.close()
    if loader_error is not None and not any(
            f.kind == "corrupt" and f.path == loader_error.path for f in findings[start:]):
        findings.append(Finding("corrupt", loader_error.path, loader_error.offset, loader_error.detail))
    counted["loader_error"] = str(loader_error) if loader_error else None
    return counted


def run(args) -> int:
    lanes = find_lanes(args.path)
    data_files = [os.path.join(d, n) for _name, d in lanes for n in os.listdir(d) if is_data_file_name(n)]
    progress = Progress(len(data_files), sum(os.path.getsize(p) for p in data_files),
                        args.progress_mb, args.quiet)
    started = time.monotonic()
    totals = {"files": 0, "records": 0, "bytes": 0, "large_bodies": 0, "large_bytes": 0,
              "pages": 0, "page_bytes": 0}
    corrupt = 0
    for name, lane_dir in lanes:
        findings: list[Finding] = []
        counted = verify_lane(lane_dir, progress, findings)
        for key in totals:
            totals[key] += counted[key]
        lane_corrupt = sum(f.kind == "corrupt" for f in findings)
        corrupt += lane_corrupt
        verdict = "CORRUPT" if lane_corrupt else "clean"
        print(f"lane {name}: {counted['files']} files, {counted['records']} records, "
              f"{counted['large_bodies']} large bodies"
              + (f", {plural(counted['pages'], 'page file')}" if counted["pages"] else "")
              + f": {verdict}")
        for finding in sorted(findings, key=lambda f: (f.path, f.offset or 0)):
            print(finding.line())
        if counted["loader_error"]:
            print(f"  opening this lane fails with: {counted['loader_error'].split('. Nothing')[0]}")
    seconds = time.monotonic() - started
    print(f"verify: {plural(len(lanes), 'lane')}, {totals['files']} files, {totals['records']} records, "
          f"{human_bytes(totals['bytes'])} of data files and {totals['large_bodies']} large bodies "
          f"({human_bytes(totals['large_bytes'])}) and {plural(totals['pages'], 'page file')} "
          f"({human_bytes(totals['page_bytes'])}) checked in {seconds:.2f} s: "
          + (f"CORRUPT ({plural(corrupt, 'damaged region')})" if corrupt else "clean"))
    return 1 if corrupt else 0
