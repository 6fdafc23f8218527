"""Compaction of one lane, online: the lane's writer keeps appending meanwhile.

Artemis's algorithm with its control-file protocol, restated for lanes whose
writer is another process (FORMAT.md, "Compaction"):

1. take the lane's maintenance lock (one compactor per lane; while it is held
   the writer does not reclaim, so the planned files stay as they are);
2. finish a swap a killed compactor left committed, and remove its debris;
3. load the lane under the shared file-set lock, like any reader. The files
   to compact are those with data, but the newest with data (the writer's);
   they never change again except by reclaim, which waits for us;
4. if ``compactMinFiles`` and ``compactPercentage`` are met (or forced), write
   their live records - current versions of live records as ADDs, and the
   records and PREPAREs of transactions still open - in log order into new
   files ``<name>.cmp``, taking the lowest old file ids and their names so the
   log order holds; each is zero-filled, written whole with its exact end of
   data in its header, and synced. In a lane of events (``events=True``: the
   lanes of a node root) deletion vectors are applied on the way
   (compaction_deletes.py);
5. write the control file (the commit point), then, under the exclusive
   file-set lock (waiting up to ``swap_wait`` seconds for readers in flight),
   swap: rename the new files over their names, remove the other old files,
   bump ``files.gen``, remove the control file. The writer notices the new
   generation at its next roll or task and reloads before it reclaims.

Crash behaviour: killed before 5's control file is durable, the old files
stand and the ``.cmp`` files are removed by the next compaction; killed after,
the compaction is done for every reader (swap.lane_view) and the next
exclusive holder finishes the swap. Readers in flight never lose a file: the
swap waits for them; if they outlast ``swap_wait`` the swap is left committed
and finished later (reported as deferred).
"""
from __future__ import annotations

import dataclasses
import logging
import os
import time

from ..config import JournalConfig, load_config
from ..faults import crash_point
from ..format import layout
from ..format.codec import CODEC
from ..io.modes import use_config_modes
from ..journal.inside import check_inside
from ..io.direct_write import Stage, write_new_file
from ..io.files_io import fsync_dir, remove_quietly
from ..journal.datafile import FileHeader
from ..journal.fileset import hold_for_reading, read_generation, try_hold_exclusive, try_hold_maintenance
from ..journal.loader import LoadedFile, load
from ..journal.state import V_FILE, V_OFFSET
from ..journal.swap import COMPACTING_SUFFIX, CONTROL_FILE, ControlFile, finish_swap, read_control, write_control
from .compaction_deletes import apply_deletion_vectors, body_of

log = logging.getLogger("sparkjournal.compact")
SWAP_WAIT_SECONDS = 60.0


@dataclasses.dataclass
class CompactionReport:
    lane: str
    compacted: bool = False
    reason: str = ""                     # what happened, or why nothing did
    files_before: int = 0                # data files of the lane before
    files_after: int = 0
    compacted_files: int = 0             # old files replaced
    new_files: int = 0
    bytes_before: int = 0                # data bytes in the replaced files
    bytes_after: int = 0                 # data bytes written
    records_kept: int = 0
    records_dropped: int = 0
    generation: int = 0
    finished_interrupted_swap: bool = False
    swap_deferred: bool = False
    rewrite_seconds: float = 0.0
    swap_seconds: float = 0.0
    seconds: float = 0.0

    def line(self) -> str:
        if not self.compacted:
            return f"{self.lane}: not compacted: {self.reason}"
        return (f"{self.lane}: compacted {self.compacted_files} files "
                f"({self.bytes_before} data bytes) into {self.new_files} "
                f"({self.bytes_after} bytes), {self.records_kept} records kept, "
                f"{self.records_dropped} dropped; {self.files_before} -> {self.files_after} "
                f"files; generation {self.generation}; {self.seconds:.3f}s"
                + ("; swap deferred: readers busy" if self.swap_deferred else ""))


@dataclasses.dataclass(frozen=True)
class Kept:
    """One record to copy: where it is, and as what it is written."""
    source: LoadedFile
    index: int                           # in the source file's scan
    rtype: int
    tx_id: int
    body: bytes | None = None            # a new body (deleted rows dropped); None: the stored one

    @property
    def size(self) -> int:
        length = len(self.body) if self.body is not None else self.source.scan.body_lens[self.index]
        return layout.record_size(length)


def compact_lane(lane: str, config: JournalConfig | None = None, *, force: bool = False,
                 swap_wait: float = SWAP_WAIT_SECONDS, events: bool = False,
                 **options) -> CompactionReport:
    """Compacts one lane (module doc); ``events``: the lane holds a stream's
    events (a lane of a node root), so deletion vectors are applied."""
    config = config.with_options(options) if config else load_config(options)
    use_config_modes(lane, config)
    started = time.monotonic()
    report = CompactionReport(lane)
    maintenance = try_hold_maintenance(lane)
    if maintenance is None:
        report.reason = "another maintenance process holds the lane (compact.lock)"
        return report
    with maintenance:
        archive = (check_inside(lane, config.archiveDirectory, "archiveDirectory")
                   if config.archive else None)
        control = read_control(lane)      # read once: a writer's reclaim may finish it meanwhile
        if control is not None:
            report.finished_interrupted_swap = _swap(lane, control, archive, swap_wait)
        _remove_debris(lane)
        _compact(lane, config, force, swap_wait, archive, events, report)
    report.seconds = time.monotonic() - started
    log.info("%s", report.line())
    return report


def _remove_debris(lane: str) -> None:
    """Files a compactor killed before its control file left behind."""
    for name in os.listdir(lane):
        if name.endswith(COMPACTING_SUFFIX) or name == CONTROL_FILE + ".tmp":
            remove_quietly(os.path.join(lane, name))


def _compact(lane, config, force, swap_wait, archive, events, report) -> None:
    with hold_for_reading(lane):
        loaded = load(lane, verify_crc=config.checksum, writable=False)
        try:
            control = _rewrite(lane, loaded, config, force, events, report)
        finally:
            for file in loaded.files:
                file.mapped.close()
    if control is not None:
        report.compacted = True
        report.generation = control.generation
        swap_started = time.monotonic()
        report.swap_deferred = not _swap(lane, control, archive, swap_wait)
        report.swap_seconds = time.monotonic() - swap_started
        report.files_after = report.files_before - report.compacted_files + report.new_files


def _rewrite(lane, loaded, config, force, events, report) -> ControlFile | None:
    """Writes the new files and the control file; None when there is nothing to do."""
    with_data = [f for f in loaded.files if f.n_data]
    report.files_before = len(loaded.files)
    sealed = with_data[:-1]
    if not sealed:
        report.reason = "no sealed file with data (only the file being written)"
        return None
    kept = select_live(loaded, sealed)
    if events:
        kept = apply_deletion_vectors(loaded, kept)
    data_bytes = sum(f.end - layout.FILE_HEADER_SIZE for f in sealed)
    live_bytes = sum(k.size for k in kept)
    live_percent = 100.0 * live_bytes / data_bytes if data_bytes else 0.0
    if not force and (len(sealed) < config.compactMinFiles or live_percent >= config.compactPercentage):
        report.reason = (f"{len(sealed)} sealed files (compactMinFiles {config.compactMinFiles}), "
                         f"{live_percent:.1f}% live (compactPercentage {config.compactPercentage})")
        return None
    file_size = sealed[0].header.file_size
    placed = place(kept, file_size)
    if len(placed) >= len(sealed):
        report.reason = (f"the live records of {len(sealed)} files would still take "
                         f"{len(placed)} files: nothing to gain")
        return None
    started = time.monotonic()
    by_id = sorted(sealed, key=lambda f: f.file_id)
    stage, previous = Stage(), None
    for out, records in zip(by_id, placed):
        previous = _write_file(lane, out, records, previous, loaded.state, stage)
        crash_point("compact:file-written")
    fsync_dir(lane)
    report.rewrite_seconds = time.monotonic() - started
    report.compacted_files, report.new_files = len(sealed), len(placed)
    report.bytes_before, report.bytes_after = data_bytes, live_bytes
    report.records_kept = len(kept)
    report.records_dropped = sum(f.n_data for f in sealed) - len(kept)
    control = ControlFile(max(read_generation(lane), 0) + 1,
                          tuple((os.path.basename(f.path), f.file_id) for f in sealed),
                          tuple((os.path.basename(out.path), out.file_id)
                                for out, _records in zip(by_id, placed)))
    crash_point("compact:before-control")
    write_control(lane, control)
    crash_point("compact:control-written")
    return control


def select_live(loaded, sealed: list) -> list[Kept]:
    """The records of ``sealed`` (in log order) that the lane still needs: the
    current version of every live record (as an ADD: a committed transaction's
    records are plain records now), and every record and PREPARE of a
    transaction with no outcome yet (its COMMIT or ROLLBACK may follow in a
    newer file). Deletes, outcomes and superseded or rolled-back records go."""
    state, kept = loaded.state, []
    for file in sealed:
        scan, fid, n = file.scan, file.file_id, file.n_data
        columns = zip(scan.types[:n].tolist(), scan.record_ids[:n].tolist(),
                      scan.tx_ids[:n].tolist(), scan.offsets[:n].tolist())
        for index, (rtype, record_id, tx_id, offset) in enumerate(columns):
            if rtype in layout.TX_DATA_TYPES and tx_id in state.txs:
                kept.append(Kept(file, index, rtype, tx_id))
            elif rtype == layout.PREPARE:
                tx = state.txs.get(tx_id)
                if tx is not None and tx.prepared and tx.prepare_file == fid:
                    kept.append(Kept(file, index, rtype, tx_id))
            elif rtype in (layout.ADD, layout.UPDATE, layout.ADD_TX, layout.UPDATE_TX):
                version = state.live.get(record_id)
                if version is not None and version[V_FILE] == fid and version[V_OFFSET] == offset:
                    kept.append(Kept(file, index, layout.ADD, 0))
    return kept


def place(kept: list[Kept], file_size: int) -> list[list[Kept]]:
    """Packs the records, in order, into as few files of ``file_size`` as they fit."""
    files, current, pos = [], [], layout.FILE_HEADER_SIZE
    for record in kept:
        size = record.size
        if pos + size > file_size and current:
            files.append(current)
            current, pos = [], layout.FILE_HEADER_SIZE
        current.append(record)
        pos += size
    if current:
        files.append(current)
    return files


def _write_file(lane: str, out: LoadedFile, records: list[Kept], previous, state,
                stage: Stage) -> tuple[int, int]:
    """Writes ``records`` as ``<out's name>.cmp`` with ``out``'s file id; returns
    (its id, its end of data) for the next file's header."""
    file_size, fid32 = out.header.file_size, layout.file_id32(out.file_id)
    counts: dict[int, int] = {}                    # tx -> its records in this file so far

    def fill(view: memoryview) -> None:
        pos = layout.FILE_HEADER_SIZE
        for record in records:
            scan = record.source.scan
            body = record.body if record.body is not None else body_of(record.source, record.index)
            count = 0
            if record.rtype == layout.PREPARE:
                count = counts.get(record.tx_id, 0)
            elif record.tx_id:
                counts[record.tx_id] = counts.get(record.tx_id, 0) + 1
            pos = CODEC.encode_record(view, pos, record.rtype, scan.flags[record.index],
                                      scan.user_types[record.index], fid32,
                                      scan.record_ids[record.index], record.tx_id, count, body)
        view[pos:] = bytes(len(view) - pos)
        header = FileHeader(out.file_id, file_size, out.header.block_size, 0,
                            out.header.user_version,
                            prev_file_id=previous[0] if previous else 0,
                            prev_end=previous[1] if previous else 0, sealed_end=pos,
                            max_record_id=state.max_record_id, max_tx_id=state.max_tx_id)
        view[:layout.FILE_HEADER_SIZE] = header.encode()
        ends.append(pos)

    ends: list[int] = []
    write_new_file(out.path + COMPACTING_SUFFIX, stage, size=file_size, fill=fill)
    return out.file_id, ends[0]


def _swap(lane: str, control: ControlFile, archive: str | None, wait: float) -> bool:
    """Finishes a committed swap under the exclusive file-set lock; False when
    readers held the lane past ``wait`` (the swap stays committed, for later)."""
    held = try_hold_exclusive(lane, wait)
    if held is None:
        log.warning("%s: readers held the lane for %.0fs: compaction %d is committed but "
                    "its swap is left for the next compaction or the writer's next reclaim",
                    lane, wait, control.generation)
        return False
    with held:
        finish_swap(lane, control, archive)
    return True
