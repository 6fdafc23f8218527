"""Compaction of one lane, online: the lane's writer keeps appending meanwhile.

Artemis's algorithm with its control-file protocol, restated for lanes whose
writer is another process (FORMAT.md, "Compaction"):

1. take the lane's maintenance lock (one compactor per lane; while it is held
   the writer does not reclaim, so the planned files stay as they are);
2. finish a swap a killed compactor left committed, and remove its debris;
3. scan the lane under the shared file-set lock, like any reader
   (loader.scan_lane: the same end-of-data and damage decisions; the files
   it scans read into the page cache first at the pass's rate), and plan
   what stays (compaction_plan.py: the loader's replay rules, in C when
   built). The files to compact are those with data, but the newest with
   data (the writer's); they never change again except by reclaim, which
   waits for us;
4. if ``compactMinFiles`` and ``compactPercentage`` are met (or forced), write
   their live records - current versions of live records as ADDs, and the
   records and PREPAREs of transactions still open - in log order into new
   files ``<name>.cmp``, taking the lowest old file ids and their names so the
   log order holds; each is zero-filled, written whole with its exact end of
   data in its header, and synced (``WRITERS`` files at a time; all are
   synced, and the folder, before the control file). In a lane of events (``events=True``: the
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
import queue
import time
from array import array
from concurrent.futures import ThreadPoolExecutor
from bisect import bisect_right
from itertools import accumulate, chain

from ..config import JournalConfig, load_config
from ..faults import crash_point
from ..format import layout
from ..format.codec import CODEC
from ..io.modes import use_config_modes
from ..journal.inside import check_inside
from ..io.direct_write import Stage, write_new_file
from ..io.io_rate import IoRate
from .low_priority import run_at
from ..io.files_io import fsync_dir, remove_quietly
from ..journal.datafile import FileHeader
from ..journal.fileset import hold_for_reading, read_generation, try_hold_exclusive, try_hold_maintenance
from ..journal.loader import LoadedFile, scan_lane
from ..journal.records import LoadReport
from ..journal.swap import COMPACTING_SUFFIX, CONTROL_FILE, ControlFile, finish_swap, read_control, write_control
from .compaction_deletes import apply_deletion_vectors
from .compaction_plan import Plan, plan

log = logging.getLogger("sparkjournal.compact")
SWAP_WAIT_SECONDS = 60.0
WRITERS = 2          # new files written at once: 1 -> 2 took the rewrite of 64 MiB from ~0.27 to ~0.15 s


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


@dataclasses.dataclass
class Kept:
    """The records kept of one source file, in file order: where they are, and
    as what they are written (compaction_plan.py)."""
    source: LoadedFile
    index: list                          # in the source file's scan
    types: bytes                         # the type each is written as
    bodies: dict = dataclasses.field(default_factory=dict)  # position -> a new body (rows dropped)

    def sizes(self) -> list[int]:
        lens = self.source.scan.body_lens
        sizes = [(layout.RECORD_HEADER_SIZE + 7 + lens[i]) & ~7 for i in self.index]
        for position, body in self.bodies.items():
            sizes[position] = layout.record_size(len(body))
        return sizes


def compact_lane(lane: str, config: JournalConfig | None = None, *, force: bool = False,
                 swap_wait: float = SWAP_WAIT_SECONDS, events: bool = False,
                 **options) -> CompactionReport:
    """Compacts one lane (module doc) at maintenancePriority (low_priority.py);
    ``events``: the lane holds a stream's events (a lane of a node root), so
    deletion vectors are applied."""
    config = config.with_options(options) if config else load_config(options)
    return run_at(config.maintenancePriority, lambda: _compact_lane(lane, config, force, swap_wait,
                                                                    events))


def _compact_lane(lane: str, config: JournalConfig, force: bool, swap_wait: float,
                  events: bool) -> CompactionReport:
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
    rate = IoRate(config.maintenanceBytesPerSecond)          # its reads and writes alike
    with hold_for_reading(lane):
        files, _pending, _damaged = scan_lane(lane, LoadReport(), verify_crc=config.checksum,
                                              read_rate=rate)
        try:
            control = _rewrite(lane, files, config, force, events, report, rate)
        finally:
            for file in files:
                file.mapped.close()
    if control is not None:
        report.compacted = True
        report.generation = control.generation
        swap_started = time.monotonic()
        report.swap_deferred = not _swap(lane, control, archive, swap_wait)
        report.swap_seconds = time.monotonic() - swap_started
        report.files_after = report.files_before - report.compacted_files + report.new_files


def _rewrite(lane, files, config, force, events, report, rate: IoRate) -> ControlFile | None:
    """Writes the new files and the control file; None when there is nothing to do."""
    with_data = [f for f in files if f.n_data]
    report.files_before = len(files)
    sealed = with_data[:-1]
    if not sealed:
        report.reason = "no sealed file with data (only the file being written)"
        return None
    live = plan(files)
    kept = select_live(live, sealed)
    if events:
        kept = apply_deletion_vectors(live, kept, lane)
    data_bytes = sum(f.end - layout.FILE_HEADER_SIZE for f in sealed)
    sizes = [k.sizes() for k in kept]
    live_bytes = sum(map(sum, sizes))
    live_percent = 100.0 * live_bytes / data_bytes if data_bytes else 0.0
    if not force and (len(sealed) < config.compactMinFiles or live_percent >= config.compactPercentage):
        report.reason = (f"{len(sealed)} sealed files (compactMinFiles {config.compactMinFiles}), "
                         f"{live_percent:.1f}% live (compactPercentage {config.compactPercentage})")
        return None
    file_size = sealed[0].header.file_size
    placed = place(kept, sizes, file_size)
    if len(placed) >= len(sealed):
        report.reason = (f"the live records of {len(sealed)} files would still take "
                         f"{len(placed)} files: nothing to gain")
        return None
    started = time.monotonic()
    by_id = sorted(sealed, key=lambda f: f.file_id)
    _write_files(lane, list(zip(by_id, placed)), live, rate)
    fsync_dir(lane)
    report.rewrite_seconds = time.monotonic() - started
    report.compacted_files, report.new_files = len(sealed), len(placed)
    report.bytes_before, report.bytes_after = data_bytes, live_bytes
    report.records_kept = sum(len(k.index) for k in kept)
    report.records_dropped = sum(f.n_data for f in sealed) - report.records_kept
    control = ControlFile(max(read_generation(lane), 0) + 1,
                          tuple((os.path.basename(f.path), f.file_id) for f in sealed),
                          tuple((os.path.basename(out.path), out.file_id)
                                for out, _placed in zip(by_id, placed)))
    crash_point("compact:before-control")
    write_control(lane, control)
    crash_point("compact:control-written")
    return control


def select_live(live: Plan, sealed: list) -> list[Kept]:
    """The records of ``sealed`` (in log order) that the lane still needs
    (compaction_plan.py states the rule)."""
    position = {id(f): p for p, f in enumerate(live.files)}
    return [Kept(file, *live.kept(position[id(file)])) for file in sealed]


def place(kept: list[Kept], sizes: list[list[int]], file_size: int) -> list[tuple[list, int]]:
    """Packs the records, in order, into as few files of ``file_size`` as they
    fit (a record too big for an empty file still gets one of its own). Each
    file is (segments, its end of data); a segment (Kept, first, stop) is
    kept.index[first:stop]."""
    flat = list(chain.from_iterable(sizes))
    ends = list(accumulate(flat))
    room = file_size - layout.FILE_HEADER_SIZE
    cuts, start = [], 0
    while start < len(flat):
        base = ends[start - 1] if start else 0
        start = max(bisect_right(ends, base + room, lo=start), start + 1)
        cuts.append(start)
    files, segment, offset, done = [], 0, 0, 0   # offset: records of kept[segment] placed
    for cut in cuts:
        segments, base = [], ends[done - 1] if done else 0
        while done < cut:
            k = kept[segment]
            take = min(len(k.index) - offset, cut - done)
            if take:
                segments.append((k, offset, offset + take))
            offset, done = offset + take, done + take
            if offset == len(k.index):
                segment, offset = segment + 1, 0
        files.append((segments, layout.FILE_HEADER_SIZE + ends[cut - 1] - base))
    return files


def _tx_counts(segments: list[tuple]) -> list:
    """Per segment, the count field of each record (None when all are 0): a
    PREPARE's is its transaction's records before it in this new file."""
    if not any(max(k.types[a:b], default=0) == layout.PREPARE for k, a, b in segments):
        return [None] * len(segments)
    counts, per_tx = [], {}
    for k, first, stop in segments:
        tx_ids, column = k.source.scan.tx_ids, array("I")
        for i, rtype in zip(k.index[first:stop], k.types[first:stop]):
            tx_id = tx_ids[i]
            column.append(per_tx.get(tx_id, 0) if rtype == layout.PREPARE else 0)
            if rtype in layout.TX_DATA_TYPES:
                per_tx[tx_id] = per_tx.get(tx_id, 0) + 1
        counts.append(column)
    return counts


def _fill(view: memoryview, fid32: int, segments: list[tuple]) -> int:
    """Writes the segments' records from FILE_HEADER_SIZE on; returns the end."""
    pos = layout.FILE_HEADER_SIZE
    for (k, first, stop), counts in zip(segments, _tx_counts(segments)):
        scan, src, base = k.source.scan, k.source.mapped.view, first
        cuts = [p for p in sorted(k.bodies) if first <= p < stop] + [stop]
        for cut in cuts:
            if first < cut:
                pos = CODEC.copy_records(view, pos, fid32, src, scan.offsets, k.index[first:cut],
                                         k.types[first:cut],
                                         counts[first - base:cut - base] if counts is not None else None)
            if cut < stop:
                i = k.index[cut]
                pos = CODEC.encode_record(view, pos, k.types[cut], scan.flags[i], scan.user_types[i],
                                          fid32, scan.record_ids[i], 0, 0, k.bodies[cut])
            first = cut + 1
    return pos


def _write_files(lane: str, outputs: list[tuple], live: Plan, rate: IoRate) -> None:
    """Writes every new file (``WRITERS`` at a time: one file's sync overlaps
    the next one's copy and write, all paced by one ``rate``:
    maintenanceBytesPerSecond); returns once all are synced. Each file's
    header names the previous new file and its end, known from the placement.
    Crash behaviour: until the control file, every ``.cmp`` is debris the next
    compaction removes; a failed write raises after the others finished."""
    ends = [end for _out, (_segments, end) in outputs]
    stages: queue.SimpleQueue = queue.SimpleQueue()
    for _ in range(WRITERS):
        stages.put(Stage())

    def write(number: int) -> None:
        out, (segments, _end) = outputs[number]
        previous = (outputs[number - 1][0].file_id, ends[number - 1]) if number else None
        stage = stages.get()
        try:
            end = _write_file(out, segments, previous, live, stage, rate)
        finally:
            stages.put(stage)
        if end != ends[number]:
            raise AssertionError(f"{out.path}: wrote data up to {end}, placed up to {ends[number]}")

    try:
        with ThreadPoolExecutor(WRITERS, thread_name_prefix="compact-write") as pool:
            for written in [pool.submit(write, number) for number in range(len(outputs))]:
                written.result()
                crash_point("compact:file-written")
    finally:
        while not stages.empty():
            stages.get().release()


def _write_file(out: LoadedFile, segments: list[tuple], previous, live: Plan,
                stage: Stage, rate: IoRate) -> int:
    """Writes the records of ``segments`` as ``<out's name>.cmp`` with ``out``'s
    file id, after a header naming ``previous`` (file id, end); returns its end."""
    file_size, fid32 = out.header.file_size, layout.file_id32(out.file_id)
    ends: list[int] = []

    def fill(view: memoryview) -> None:
        pos = _fill(view, fid32, segments)
        view[pos:] = bytes(len(view) - pos)
        header = FileHeader(out.file_id, file_size, out.header.block_size, 0,
                            out.header.user_version,
                            prev_file_id=previous[0] if previous else 0,
                            prev_end=previous[1] if previous else 0, sealed_end=pos,
                            max_record_id=live.max_record_id, max_tx_id=live.max_tx_id)
        view[:layout.FILE_HEADER_SIZE] = header.encode()
        ends.append(pos)

    write_new_file(out.path + COMPACTING_SUFFIX, stage, size=file_size, fill=fill, rate=rate)
    return ends[0]


def _swap(lane: str, control: ControlFile, archive: str | None, wait: float) -> bool:
    """Finishes a committed swap under the exclusive file-set lock; False when
    readers held the lane past ``wait`` (the swap stays committed, for later)."""
    held = try_hold_exclusive(lane, wait)
    if held is None:
        log.warning("%s: readers held the lane for %gs: compaction %d is committed but "
                    "its swap is left for the next compaction or the writer's next reclaim",
                    lane, wait, control.generation)
        return False
    with held:
        finish_swap(lane, control, archive)
    return True
