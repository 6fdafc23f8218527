"""Compaction (maintenance/compactor.py): one scenario per test, then the crash
tests - the compactor SIGKILLed at every step, and a writer SIGKILLed at random
while compactions and readers run beside it on the same lane."""
from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import threading

import pytest

from sparkjournal import CorruptJournalError, Journal
from sparkjournal.format import layout
from sparkjournal.journal.swap import CONTROL_FILE
from sparkjournal.maintenance.compactor import compact_lane

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}
FORCE = {"force": True, **OPTIONS}


def body_of(record_id: int, version: int = 0) -> bytes:
    return (f"{record_id}:{version}|".encode() * 200)[:1000 + record_id % 700]


def fill_lane(lane: str, count: int = 300, **options) -> dict:
    """Adds ``count`` records, updates every 5th, deletes every other; returns
    {record id: body} of what is live."""
    live = {}
    with Journal.open(lane, **{**OPTIONS, **options}) as journal:
        for record_id in range(1, count + 1):
            journal.append_add(record_id, body_of(record_id), user_type=3, sync=False)
            live[record_id] = body_of(record_id)
        for record_id in range(5, count + 1, 5):
            journal.append_update(record_id, body_of(record_id, 1), user_type=3, sync=False)
            live[record_id] = body_of(record_id, 1)
        for record_id in range(2, count + 1, 2):
            journal.append_delete(record_id, sync=False)
            del live[record_id]
    return live


def read_all(lane: str) -> dict:
    with Journal.read(lane, **OPTIONS) as snapshot:
        return {r.record_id: bytes(r.body) for r in snapshot.records()}


def data_file_count(lane: str) -> int:
    return len([n for n in os.listdir(lane) if re.fullmatch(r"data-\d+\.sjd", n)])


# --- scenarios ----------------------------------------------------------------------------

def test_compaction_keeps_exactly_the_live_records_and_reports_what_it_did(lane):
    live = fill_lane(lane)
    before = data_file_count(lane)
    report = compact_lane(lane, **FORCE)
    assert report.compacted and not report.swap_deferred, report.line()
    assert report.new_files < report.compacted_files
    assert report.bytes_after < report.bytes_before
    assert report.records_kept + report.records_dropped > report.records_kept > 0
    assert report.generation == 1
    assert data_file_count(lane) == before - report.compacted_files + report.new_files
    assert read_all(lane) == live
    assert not [n for n in os.listdir(lane) if n.endswith(".cmp") or n == CONTROL_FILE]
    with Journal.open(lane, **OPTIONS) as journal:        # the writer sees the same
        assert {r.record_id: bytes(r.body) for r in journal.records()} == live
        assert all(r.user_type == 3 for r in journal.records())


def test_below_the_thresholds_nothing_is_compacted_and_the_reason_is_reported(lane):
    live = fill_lane(lane)
    report = compact_lane(lane, compactMinFiles=1000, **OPTIONS)
    assert not report.compacted
    assert "compactMinFiles 1000" in report.reason
    report = compact_lane(lane, compactMinFiles=1, compactPercentage=1, **OPTIONS)
    assert not report.compacted and "compactPercentage 1" in report.reason
    assert read_all(lane) == live


def test_open_and_prepared_transactions_survive_compaction_and_their_outcome_applies(lane):
    live = fill_lane(lane, count=200)
    with Journal.open(lane, **OPTIONS) as journal:
        prepared_tx, open_tx = journal.next_tx_id(), journal.next_tx_id()
        journal.append_add_tx(prepared_tx, 1001, b"prepared", user_type=3)
        journal.append_delete_tx(prepared_tx, 1)
        journal.prepare(prepared_tx, xid=b"the-xid")
        journal.append_add_tx(open_tx, 1002, b"still open", user_type=3)
        for record_id in range(2000, 2120):                      # push them into sealed files
            journal.append_add(record_id, body_of(record_id), user_type=3, sync=False)
            live[record_id] = body_of(record_id)
        journal.flush()
        report = compact_lane(lane, **FORCE)
        assert report.compacted, report.line()
        journal.commit(prepared_tx)
        journal.commit(open_tx)
    live.pop(1)
    live.update({1001: b"prepared", 1002: b"still open"})
    assert read_all(lane) == live
    with Journal.read(lane, **OPTIONS) as snapshot:
        assert snapshot.prepared() == [] and snapshot.open_transactions() == {}


def test_record_ids_are_never_handed_out_again_after_their_records_are_compacted_away(lane):
    with Journal.open(lane, **OPTIONS) as journal:
        for record_id in range(1, 120):
            journal.append_add(record_id, body_of(record_id), sync=False)
        for record_id in range(1, 120):
            journal.append_delete(record_id, sync=False)
        journal.append_add(5000, b"x" * 30_000)        # rolls: the deletes are sealed too
        journal.append_delete(5000)
    assert compact_lane(lane, **FORCE).compacted
    for _ in range(2):                                   # reclaim at open frees the rest
        with Journal.open(lane, **OPTIONS) as journal:
            assert journal.max_record_id == 5000
            assert journal.next_record_id() == 5001


def test_a_reader_in_flight_defers_the_swap_and_reads_on(lane):
    live = fill_lane(lane)
    with Journal.read(lane, **OPTIONS) as reader:
        report = compact_lane(lane, swap_wait=0.2, **FORCE)
        assert report.compacted and report.swap_deferred, report.line()
        assert os.path.exists(os.path.join(lane, CONTROL_FILE))        # committed, not swapped
        assert read_all(lane) == live                        # a new reader: the new files
        assert {r.record_id: bytes(r.body) for r in reader.records()} == live
    report = compact_lane(lane, **FORCE)                     # the next run finishes the swap
    assert report.finished_interrupted_swap
    assert not os.path.exists(os.path.join(lane, CONTROL_FILE))
    assert read_all(lane) == live


def test_a_second_compactor_on_the_same_lane_is_turned_away(lane):
    fill_lane(lane)
    code = ("import sys, time\nfrom sparkjournal.journal.fileset import try_hold_maintenance\n"
            "held = try_hold_maintenance(sys.argv[1]); print('held', flush=True); time.sleep(30)\n")
    holder = subprocess.Popen([sys.executable, "-c", code, lane], stdout=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": REPO})
    try:
        assert holder.stdout.readline() == b"held\n"
        report = compact_lane(lane, **FORCE)
        assert not report.compacted and "another maintenance process" in report.reason
    finally:
        holder.kill()
        holder.wait()
    assert compact_lane(lane, **FORCE).compacted         # a dead holder's lock is gone


def test_a_damaged_control_file_fails_the_load_naming_it(lane):
    fill_lane(lane)
    with Journal.read(lane, **OPTIONS) as reader:            # keep the swap from running
        assert compact_lane(lane, swap_wait=0.1, **FORCE).swap_deferred
        control = os.path.join(lane, CONTROL_FILE)
        raw = bytearray(open(control, "rb").read())
        raw[raw.index(b'"generation": 1')+len('"generation": ')] = ord("7")
        open(control, "wb").write(bytes(raw))
        assert reader.records()                              # a reader in flight reads on
    with pytest.raises(CorruptJournalError) as failure:
        read_all(lane)
    assert CONTROL_FILE in str(failure.value) and "checksum mismatch" in str(failure.value)
    with pytest.raises(CorruptJournalError):
        Journal.open(lane, **OPTIONS)


def test_damage_at_the_end_of_a_compacted_file_is_corruption_not_end_of_data(lane):
    fill_lane(lane)
    assert compact_lane(lane, **FORCE).compacted
    with Journal.read(lane, **OPTIONS) as snapshot:
        compacted = [f for f in snapshot._paths.values()]
    from sparkjournal.journal.datafile import read_header
    sealed = [p for p in compacted if read_header(p).sealed_end]
    assert sealed
    path = sealed[-1]
    end = read_header(path).sealed_end
    with open(path, "r+b") as handle:                  # the last record's file id field
        view = handle.read(end)
        last = max(m.start() for m in re.finditer(re.escape(b"|"), view[:end]))
        offsets = [o for o in range(layout.FILE_HEADER_SIZE, end, 8)]
        handle.seek(_last_record_offset(path, end) + 8)
        handle.write(b"\xff\xff\xff\xff")
    with pytest.raises(CorruptJournalError) as failure:
        read_all(lane)
    assert "written whole" in str(failure.value) and os.path.basename(path) in str(failure.value)


def _last_record_offset(path: str, end: int) -> int:
    from sparkjournal.format.codec import CODEC
    from sparkjournal.journal.datafile import MappedFile, read_header
    mapped = MappedFile(path)
    try:
        scan = mapped.scan(read_header(path).file_id, True)
        return scan.offsets[scan.n - 1]
    finally:
        mapped.close()


def test_archive_keeps_every_replaced_file(lane):
    live = fill_lane(lane)
    report = compact_lane(lane, archive=True, **FORCE)
    assert report.compacted
    archived = os.listdir(os.path.join(lane, "archive"))
    assert len(archived) == report.compacted_files
    assert read_all(lane) == live


# --- the compactor killed at every step ----------------------------------------------------

CRASH_POINTS = ["compact:file-written", "compact:before-control", "compact:control-written",
                "swap:renamed", "swap:removed", "swap:generation-written"]


@pytest.mark.parametrize("recovers", ["next compactor", "writer"])
@pytest.mark.parametrize("point", CRASH_POINTS)
def test_compactor_killed_at_each_step_loses_nothing(lane, point, recovers):
    live = fill_lane(lane, count=600)
    code = ("import sys\nfrom sparkjournal.maintenance.compactor import compact_lane\n"
            "compact_lane(sys.argv[1], force=True, fileSize='64k', bufferSize='16k', minFiles=2)\n")
    child = subprocess.run([sys.executable, "-c", code, lane], capture_output=True,
                           env={**os.environ, "PYTHONPATH": REPO, "SPARKJOURNAL_CRASH_AT": point})
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    committed = os.path.exists(os.path.join(lane, CONTROL_FILE))
    assert committed == (point not in ("compact:file-written", "compact:before-control"))
    assert read_all(lane) == live                       # readers: old or new files, whole
    if recovers == "next compactor":                     # cleans up, or finishes the swap
        assert compact_lane(lane, **FORCE).finished_interrupted_swap == committed
    with Journal.open(lane, **OPTIONS) as journal:       # finishes a swap still pending
        assert {r.record_id: bytes(r.body) for r in journal.records()} == live
    assert not os.path.exists(os.path.join(lane, CONTROL_FILE))
    compact_lane(lane, **FORCE)
    assert not [n for n in os.listdir(lane) if n.endswith(".cmp") or n.startswith(CONTROL_FILE)]
    assert read_all(lane) == live


# --- a writer killed at random while compactions and readers run beside it -----------------

def _crash_module():
    import importlib.util
    spec = importlib.util.spec_from_file_location("sj_test_crash", os.path.join(HERE, "test_crash.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


crash = _crash_module()


class CompactingChecker(crash.CrashChecker):
    """The crash checker of test_crash.py, with compactions and checking readers
    running on the same lane while the writer child appends."""

    compactions = 0
    snapshots = 0

    def run_seconds(self) -> float:
        return self.rng.uniform(0.2, 0.8)

    def start_beside(self):
        stop, failures = threading.Event(), []
        thread = threading.Thread(target=self._beside, args=(stop, failures), daemon=True)
        thread.start()
        return stop, failures, thread

    def stop_beside(self, running) -> None:
        stop, failures, thread = running
        stop.set()
        thread.join(60)
        assert not thread.is_alive(), "compaction or reader hung"
        assert not failures, failures[0]

    def _beside(self, stop, failures) -> None:
        rng = random.Random(self.rng.random())
        try:
            while not stop.is_set():
                if rng.random() < 0.5:
                    if not os.path.isdir(self.lane):
                        continue
                    report = compact_lane(self.lane, force=True, swap_wait=5, **OPTIONS)
                    CompactingChecker.compactions += report.compacted
                else:
                    self._check_a_snapshot()
        except Exception as error:        # noqa: BLE001 - reported by stop_beside
            failures.append(error)

    def _check_a_snapshot(self) -> None:
        """Every record a reader sees has the body of one version of itself."""
        if not os.path.isdir(self.lane) or not any(n.endswith(".sjd") for n in os.listdir(self.lane)):
            return
        with Journal.read(self.lane, **OPTIONS) as snapshot:
            for record in snapshot.records():
                raw = bytes(record.body)
                record_id, version = raw[:raw.index(b"|")].split(b":")
                assert int(record_id) == record.record_id
                assert raw == crash.body(record.record_id, int(version))
        CompactingChecker.snapshots += 1


def test_writer_compactions_and_readers_at_once_on_one_lane_lose_nothing(tmp_path, backend):
    CompactingChecker.compactions = CompactingChecker.snapshots = 0
    checker = crash.run_crashes(tmp_path, backend, kills=4, seed=5150 + len(backend),
                                checker_class=CompactingChecker)
    assert checker.kills == 4 and checker.known
    assert CompactingChecker.compactions > 0, "no compaction ran: the test exercised nothing"
    assert CompactingChecker.snapshots > 0
    print(f"{backend}: {checker.kills} writer kills, {CompactingChecker.compactions} compactions, "
          f"{CompactingChecker.snapshots} checked snapshots, {len(checker.known)} live records")


@pytest.mark.slow
def test_writer_compactions_and_readers_at_once_long(tmp_path, backend):
    CompactingChecker.compactions = CompactingChecker.snapshots = 0
    checker = crash.run_crashes(tmp_path, backend, kills=40, seed=6160 + len(backend),
                                checker_class=CompactingChecker)
    assert checker.kills == 40 and CompactingChecker.compactions > 40
    print(f"{backend}: {checker.kills} writer kills, {CompactingChecker.compactions} compactions, "
          f"{CompactingChecker.snapshots} checked snapshots, {len(checker.known)} live records")
