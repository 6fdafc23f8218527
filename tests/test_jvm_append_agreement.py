"""The JVM appender (jvm/src/main/java/io/sparkjournal/journal/LaneAppender.java)
writes lanes exactly as the Python journal does.

Lanes are written through ``io.sparkjournal.journal.AppendTool`` (a LaneAppender
driven by JSON lines) and then read by Python, which must find exactly what the
script says: records with their bodies and user types in order, prepared and
open transactions, no damage; Python's writer must open and continue them, and
the JVM reader (LaneDump) must then read what Python reads. The bytes are
Python's: each record Java wrote equals ``codec_python.encode_record`` of the
same fields, and its file headers parse in Python with the fields a Python
writer would have put there. Java also continues lanes Python wrote (files
reclaimed and reused, transactions left prepared and open), as Python's own
writer would (the same script through Python on a copy ends in the same
records); zeroes a torn tail before it appends; and, killed with SIGKILL at
random moments, never loses an acknowledged synced record and always leaves a
lane that loads clean and that it reopens and continues.
"""
from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import shutil
import signal
import subprocess
import threading
import time

import pytest

from sparkjournal import Journal
from sparkjournal.format import codec_python, layout
from sparkjournal.journal.datafile import read_header
from sparkjournal.journal.loader import load
from sparkjournal.maintenance.compactor import compact_lane

from lane_surgery import patch, read_at, scan_lane
from test_jvm_format_agreement import jvm  # noqa: F401  (fixture: java launcher, class path)
from test_jvm_journal_agreement import assert_agree, make_lane, write_lane

TOOL = "io.sparkjournal.journal.AppendTool"
JAVA_OPTIONS = {"fileSize": 32 << 10, "bufferSize": 8 << 10, "deviceBlockSize": 512, "maxIO": 2,
                "userVersion": 7}
PY_OPTIONS = {"fileSize": "32k", "bufferSize": "8k", "maxIO": 2, "journalType": "NIO",
              "userVersion": 7}
BUFFER = 8 << 10
# Bodies from empty to larger than the buffer (written alone) and near a whole file.
SIZES = [0, 1, 7, 8, 9, 40, 100, 500, 1500, 3000, 5000, 7000, 8100, 9000, 15000, 24000]


# --- running the tool ------------------------------------------------------------------------
@pytest.fixture(scope="session")
def tool(jvm):
    """(java launcher, class path: the connector jar, the test tools jar and the Jackson
    jars Spark ships)."""
    return jvm


def run_tool(tool, lane: str, commands: list, options: dict | None = None) -> tuple[dict, list]:
    """Runs one AppendTool session to its end; (its open line, its acks). Fails on an error."""
    java, classpath = tool
    text = "".join(json.dumps(c) + "\n" for c in commands)
    done = subprocess.run([java, "-cp", classpath, TOOL, lane, json.dumps(options or JAVA_OPTIONS)],
                          input=text, capture_output=True, text=True, timeout=60)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, f"AppendTool failed ({done.returncode}): {lines[-1:]} {done.stderr}"
    assert len(lines) == len(commands) + 1, lines[-3:]
    return lines[0], lines[1:]


def tool_error(tool, lane: str, commands: list, options: dict | None = None) -> str:
    java, classpath = tool
    text = "".join(json.dumps(c) + "\n" for c in commands)
    done = subprocess.run([java, "-cp", classpath, TOOL, lane, json.dumps(options or JAVA_OPTIONS)],
                          input=text, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    return json.loads(done.stdout.splitlines()[-1])["error"]


# --- scripts and what they must leave ------------------------------------------------------------
@dataclasses.dataclass
class Model:
    """What a script leaves visible: a plain in-memory journal."""
    live: dict = dataclasses.field(default_factory=dict)       # id -> (user type, body), in order
    txs: dict = dataclasses.field(default_factory=dict)        # tx -> [(id, user type, body)]
    prepared: dict = dataclasses.field(default_factory=dict)   # tx -> xid

    def open_txs(self) -> dict:
        return {tx: [r[0] for r in recs] for tx, recs in self.txs.items() if tx not in self.prepared}

    def prepared_txs(self) -> dict:
        return {tx: (xid, [r[0] for r in self.txs[tx]]) for tx, xid in self.prepared.items()}


class Script:
    """Commands for AppendTool, the model they make, and what each one does."""

    def __init__(self, rng: random.Random, first_id: int = 1, first_tx: int = 1):
        self.rng, self.next_id, self.next_tx = rng, first_id, first_tx
        self.commands: list[dict] = []
        self.model = Model()
        self.bodies: dict[int, tuple] = {}        # every record id written -> (user type, body)
        self.tx_of: dict[int, int] = {}           # record id -> its tx (0: plain)

    def body(self) -> bytes:
        return self.rng.randbytes(self.rng.choice(SIZES))

    def add(self, sync: bool) -> None:
        record_id, self.next_id = self.next_id, self.next_id + 1
        user_type, body = self.rng.randrange(65536), self.body()
        self.commands.append({"op": "add", "id": record_id, "type": user_type, "body": body.hex(),
                              "sync": sync})
        self.model.live[record_id] = self.bodies[record_id] = (user_type, body)
        self.tx_of[record_id] = 0

    def add_tx(self, tx: int | None = None) -> int:
        if tx is None:
            tx, self.next_tx = self.next_tx, self.next_tx + 1
        record_id, self.next_id = self.next_id, self.next_id + 1
        user_type, body = self.rng.randrange(8), self.body()
        self.commands.append({"op": "add_tx", "tx": tx, "id": record_id, "type": user_type,
                              "body": body.hex()})
        self.model.txs.setdefault(tx, []).append((record_id, user_type, body))
        self.bodies[record_id] = (user_type, body)
        self.tx_of[record_id] = tx
        return tx

    def prepare(self, tx: int, sync: bool) -> None:
        xid = self.rng.randbytes(self.rng.randint(0, 40))
        self.commands.append({"op": "prepare", "tx": tx, "xid": xid.hex(), "sync": sync})
        self.model.prepared[tx] = xid

    def end(self, tx: int, commit: bool, sync: bool) -> None:
        self.commands.append({"op": "commit" if commit else "rollback", "tx": tx, "sync": sync})
        records = self.model.txs.pop(tx)
        self.model.prepared.pop(tx, None)
        if commit:
            for record_id, user_type, body in records:
                self.model.live[record_id] = (user_type, body)

    def sync(self) -> None:
        self.commands.append({"op": "sync"})


def random_script(seed: int, ops: int, first_id: int = 1, first_tx: int = 1,
                  sync_share: float = 0.3) -> Script:
    """Adds, transactions interleaved (committed, rolled back, prepared then ended or left
    prepared, left open) and syncs; ends with close."""
    rng = random.Random(seed)
    script = Script(rng, first_id, first_tx)
    active: list[int] = []          # begun, not prepared
    waiting: list[int] = []         # prepared, no outcome yet
    for _ in range(ops):
        roll = rng.random()
        if roll < 0.4:
            script.add(sync=rng.random() < sync_share)
        elif roll < 0.52 or (roll < 0.72 and not active):
            active.append(script.add_tx())
        elif roll < 0.72:
            script.add_tx(rng.choice(active))
        elif roll < 0.88 and active:
            tx = active.pop(rng.randrange(len(active)))
            outcome = rng.random()
            if outcome < 0.3:
                script.prepare(tx, sync=rng.random() < 0.5)
                waiting.append(tx)
            else:
                script.end(tx, commit=outcome < 0.8, sync=rng.random() < sync_share)
        elif roll < 0.94 and waiting:
            tx = waiting.pop(rng.randrange(len(waiting)))
            script.end(tx, commit=rng.random() < 0.6, sync=rng.random() < 0.5)
        else:
            script.sync()
    script.commands.append({"op": "close"})
    return script


def read_back(lane: str) -> dict:
    """What Python's reader finds, in the model's terms, and its report."""
    with Journal.read(lane) as snap:
        return {"live": [(r.record_id, r.user_type, bytes(r.body)) for r in snap.records()],
                "prepared": {p.tx_id: (p.xid, p.record_ids) for p in snap.prepared()},
                "open": snap.open_transactions(), "max_record_id": snap.max_record_id,
                "report": snap.report}


def assert_as_modelled(lane: str, model: Model) -> dict:
    seen = read_back(lane)
    assert seen["live"] == [(i, t, b) for i, (t, b) in model.live.items()]
    assert seen["prepared"] == model.prepared_txs()
    assert seen["open"] == model.open_txs()
    report = seen["report"]
    assert report.torn_tail is None and not report.recoveries and not report.broken_tx_ids
    assert not report.warnings
    return seen


def assert_python_writer_opens_clean(lane: str, rolled_back: list) -> None:
    with Journal.open(lane, **PY_OPTIONS) as journal:
        report = journal.report
        assert report.torn_tail is None and not report.recoveries and not report.attic
        assert not report.broken_tx_ids and not report.warnings
        assert report.rolled_back_tx_ids == rolled_back


def python_appends(lane: str, seed: int) -> None:
    """A Python writer session after Java's: records, a transaction, a roll or two."""
    rng = random.Random(seed)
    with Journal.open(lane, **PY_OPTIONS) as journal:
        for _ in range(25):
            journal.append_add(journal.next_record_id(), rng.randbytes(rng.choice(SIZES[:12])),
                               user_type=3, sync=False)
        tx = journal.next_tx_id()
        journal.append_add_tx(tx, journal.next_record_id(), b"python", user_type=1)
        journal.commit(tx)


# --- a fresh lane ----------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_random_scripts_on_a_fresh_lane_read_back_as_modelled_and_python_continues(
        tool, jvm, tmp_path, seed):
    lane = str(tmp_path / "lane")
    script = random_script(seed, 160)
    opened, acks = run_tool(tool, lane, script.commands)
    assert opened["rolled_back_tx_ids"] == [] and opened["torn_tail"] is None
    assert [a["op"] for a in acks] == [c["op"] for c in script.commands]
    assert len({a["file_id"] for a in acks}) >= 4, "the lane did not roll over several files"
    assert_as_modelled(lane, script.model)
    assert_python_writer_opens_clean(lane, list(script.model.open_txs()))
    python_appends(lane, seed)
    want = assert_agree(jvm, lane)
    assert len(want["records"]) >= len(script.model.live) + 26


def test_records_and_headers_are_python_s_bytes(tool, tmp_path):
    lane = str(tmp_path / "lane")
    script = random_script(99, 120)
    run_tool(tool, lane, script.commands)
    files = scan_lane(lane)
    assert len(files) >= 4
    xids = {c["tx"]: bytes.fromhex(c["xid"]) for c in script.commands if c["op"] == "prepare"}
    loaded = load(lane, verify_crc=True, writable=False)
    ends = {f.file_id: f.end for f in loaded.files}
    for f in loaded.files:
        f.mapped.close()
    highest_record = highest_tx = 0
    previous = None
    for data in files:
        header = read_header(data.path)
        assert (header.format_version, header.file_size, header.block_size, header.sync_window,
                header.user_version, header.sealed_end) == (2, 32 << 10, 512, 2 * BUFFER, 7, 0)
        assert (header.prev_file_id, header.prev_end) == \
            ((previous.file_id, ends[previous.file_id]) if previous else (0, 0))
        assert (header.max_record_id, header.max_tx_id) == (highest_record, highest_tx)
        with open(data.path, "rb") as handle:
            raw = handle.read()
        expected = bytearray(len(raw))
        expected[:layout.FILE_HEADER_SIZE] = raw[:layout.FILE_HEADER_SIZE]
        in_file: dict[int, int] = {}
        for extent in data.records:
            if extent.rtype == layout.ADD_TX:
                in_file[extent.tx_id] = in_file.get(extent.tx_id, 0) + 1
            if extent.rtype in (layout.ADD, layout.ADD_TX):
                user_type, body = script.bodies[extent.record_id]
                count = 0
            else:
                user_type, count = 0, in_file.get(extent.tx_id, 0)
                body = xids[extent.tx_id] if extent.rtype == layout.PREPARE else b""
            codec_python.encode_record(expected, extent.offset, extent.rtype, 0, user_type,
                                       layout.file_id32(data.file_id), extent.record_id,
                                       extent.tx_id, count, body)
            highest_record = max(highest_record, extent.record_id)
            highest_tx = max(highest_tx, extent.tx_id)
        end = -(-ends[data.file_id] // 512) * 512
        assert raw[:end] == bytes(expected[:end]), f"{data.path}: bytes differ from Python's"
        previous = data


# A call another thread's call interrupts in strace's output is printed "<unfinished ...>"
# (the file being made ahead is written by a thread of its own): taken at its start,
# which for one thread is its place among that thread's calls.
STRACE_LINE = re.compile(r"^\d+\s+(pwrite64|fdatasync|fsync)\(\d+<([^>]*)>"
                         r"(?:, \"\"\.\.\., (\d+), (\d+))?(?:\)\s+= (-?\d+)| <unfinished \.\.\.>)")


@pytest.mark.skipif(shutil.which("strace") is None, reason="no strace here")
def test_writes_stay_in_the_sync_window_and_a_file_is_synced_before_the_next(tool, tmp_path):
    """FORMAT.md's writer invariants, seen in the system calls: block-aligned writes;
    never more than the window written past a file's last sync but for a record
    written alone (no record unsynced before it, only perhaps the header of the
    roll into its file, as Python's; a sync right after); a file synced before the
    first write into the next one."""
    java, classpath = tool
    lane = str(tmp_path / "lane")
    script = random_script(5, 220, sync_share=0.02)
    trace = str(tmp_path / "strace.txt")
    done = subprocess.run(["strace", "-f", "-y", "-s", "0", "-e", "trace=pwrite64,fdatasync,fsync",
                           "-o", trace, java, "-cp", classpath, TOOL, lane,
                           json.dumps(JAVA_OPTIONS)],
                          input="".join(json.dumps(c) + "\n" for c in script.commands),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-500:] + done.stderr[-2000:]
    window = 2 * BUFFER
    unsynced: dict[str, int] = {}
    header_unsynced: dict[str, bool] = {}  # a roll's header (offset 0) is no record: it may be
    alone_in: str | None = None           # a file whose record written alone awaits its sync
    last_file, most_unsynced, alone_writes = None, 0, 0
    with open(trace) as lines:
        for line in lines:
            found = STRACE_LINE.match(line)
            if not found or not found.group(2).endswith(".sjd"):
                continue
            call, path, length, offset, result = found.groups()
            if call != "pwrite64":
                unsynced[path], header_unsynced[path] = 0, False
                alone_in = None if alone_in == path else alone_in
                continue
            length, offset = int(length), int(offset)
            assert result in (None, str(length)) and length % 512 == 0 and offset % 512 == 0, line
            assert alone_in is None, f"a write before the sync of a record written alone: {line}"
            if last_file not in (None, path):
                assert unsynced[last_file] == 0, f"{last_file} not synced before {line}"
            last_file = path
            if length > BUFFER:                 # only a record written alone is larger
                records_unsynced = unsynced.get(path, 0) - header_unsynced.get(path, False) * 4096
                assert records_unsynced == 0, f"unsynced records before a lone record: {line}"
                alone_in, alone_writes = path, alone_writes + 1
            unsynced[path] = unsynced.get(path, 0) + length
            header_unsynced[path] = header_unsynced.get(path, False) or offset == 0
            if alone_in is None:
                assert unsynced[path] <= window, f"past the sync window: {line}"
                most_unsynced = max(most_unsynced, unsynced[path])
    assert most_unsynced > BUFFER and alone_writes, "the script did not exercise the window"
    assert len([name for name in os.listdir(lane) if name.endswith(".sjd")]) >= 4
    assert_as_modelled(lane, script.model)


def test_a_body_too_big_for_a_data_file_is_a_large_record_python_reads(tool, tmp_path):
    lane = str(tmp_path / "lane")
    body = bytes(range(256)) * 120                       # 30720 bytes: a data file holds 28672
    run_tool(tool, lane, [{"op": "add", "id": 1, "body": body.hex(), "sync": True},
                          {"op": "close"}])
    assert len(os.listdir(os.path.join(lane, "large"))) == 1
    with Journal.read(lane, **PY_OPTIONS) as snapshot:
        (record,) = list(snapshot.records())
        assert record.large and bytes(record.body) == body


def test_a_prepare_too_big_for_a_data_file_is_refused_naming_size_and_limit(tool, tmp_path):
    error = tool_error(tool, str(tmp_path / "lane"),
                       [{"op": "add_tx", "tx": 1, "id": 1, "type": 1, "body": "00"},
                        {"op": "prepare", "tx": 1, "xid": "00" * 30000, "sync": True}])
    assert "30040 bytes" in error and "28672" in error and "raise fileSize" in error


def test_a_lane_with_a_python_writer_is_refused(tool, tmp_path):
    lane = str(tmp_path / "lane")
    with Journal.open(lane, **PY_OPTIONS):
        error = tool_error(tool, lane, [{"op": "sync"}])
    assert "has a writer already" in error


def test_a_lane_with_a_pending_compaction_swap_is_refused_unchanged(tool, tmp_path):
    lane = make_lane(str(tmp_path / "lane"), 2)          # seed 2: its swap is deferred
    before = sorted(os.listdir(lane))
    error = tool_error(tool, lane, [{"op": "sync"}])
    assert "compaction swap pending" in error and "Journal.open" in error
    assert sorted(os.listdir(lane)) == before


def test_an_open_waits_for_a_live_compactors_swap_then_appends(tool, tmp_path):
    """A compactor past its commit point waits (polling) for a reader to let the
    file set go; a Java open meanwhile finds the swap pending and the maintenance
    lock held, so it waits without any lock instead of refusing the lane."""
    java, classpath = tool
    lane = str(tmp_path / "lane")
    python_lane(lane, 120)
    with Journal.open(lane, **PY_OPTIONS) as journal:   # dead records: something to compact
        for record_id in range(1, 101):
            journal.append_delete(record_id, sync=False)
    assert len(scan_lane(lane)) >= 3
    reader = Journal.read(lane)                      # holds the file set: the swap must wait
    compactor = threading.Thread(target=lambda: reports.append(
        compact_lane(lane, force=True, swap_wait=30, **PY_OPTIONS)))
    reports: list = []
    compactor.start()
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(os.path.join(lane, "compact.ctl")):
            assert time.monotonic() < deadline and compactor.is_alive(), reports
            time.sleep(0.01)
        child = subprocess.Popen([java, "-cp", classpath, TOOL, lane, json.dumps(JAVA_OPTIONS)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert child.poll() is None, "Java refused the lane instead of waiting for the swap"
        assert os.path.exists(os.path.join(lane, "compact.ctl"))
    finally:
        reader.close()                                # now the compactor swaps
        compactor.join(60)
    out, _ = child.communicate('{"op": "add", "id": 500, "body": "0500", "sync": true}\n'
                               '{"op": "close"}\n', timeout=60)
    lines = [json.loads(line) for line in out.splitlines()]
    assert child.returncode == 0 and "error" not in lines[0], lines
    assert reports and reports[0].compacted and not reports[0].swap_deferred, reports
    assert not os.path.exists(os.path.join(lane, "compact.ctl"))
    assert [r[0] for r in read_back(lane)["live"]] == list(range(101, 121)) + [500]


# --- continuing a lane Python wrote ------------------------------------------------------------------
def continuation(seed: int, before: dict) -> tuple[list, list]:
    """Commands for Java and the same steps for a Python writer: end the prepared
    transactions found, add records (some larger than the buffer), commit one new
    transaction, leave one prepared and one open."""
    rng = random.Random(seed)
    fresh_id, fresh_tx = before["max_record_id"] + 1, before["max_tx"] + 1
    java = [{"op": "next_id"}, {"op": "next_tx"}]
    steps = []
    for n, tx in enumerate(before["prepared"]):
        commit = n % 2 == 0
        java.append({"op": "commit" if commit else "rollback", "tx": tx, "sync": rng.random() < 0.5})
        steps.append(("commit" if commit else "rollback", tx))
    record_id = fresh_id + 1                           # fresh_id went to next_id
    for _ in range(40):
        body = rng.randbytes(rng.choice(SIZES))
        sync = rng.random() < 0.3
        java.append({"op": "add", "id": record_id, "type": 9, "body": body.hex(), "sync": sync})
        steps.append(("add", record_id, body, sync))
        record_id += 1
    for tx, outcome in ((fresh_tx + 1, "commit"), (fresh_tx + 2, "prepare"), (fresh_tx + 3, None)):
        for _ in range(2):
            body = rng.randbytes(rng.choice(SIZES[:10]))
            java.append({"op": "add_tx", "tx": tx, "id": record_id, "type": 4, "body": body.hex()})
            steps.append(("add_tx", tx, record_id, body))
            record_id += 1
        if outcome == "commit":
            java.append({"op": "commit", "tx": tx, "sync": True})
            steps.append(("commit", tx))
        elif outcome == "prepare":
            java.append({"op": "prepare", "tx": tx, "xid": "0102", "sync": True})
            steps.append(("prepare", tx))
    java.append({"op": "close"})
    return java, steps


def python_does(lane: str, steps: list) -> list:
    """The continuation through Python's writer; the transactions its open rolled back."""
    with Journal.open(lane, **PY_OPTIONS) as journal:
        rolled_back = list(journal.report.rolled_back_tx_ids)
        journal.next_record_id()
        journal.next_tx_id()
        for step in steps:
            if step[0] == "add":
                journal.append_add(step[1], step[2], user_type=9, sync=step[3])
            elif step[0] == "add_tx":
                journal.append_add_tx(step[1], step[2], step[3], user_type=4)
            elif step[0] == "commit":
                journal.commit(step[1])
            elif step[0] == "rollback":
                journal.rollback(step[1])
            else:
                journal.prepare(step[1], b"\x01\x02")
    return rolled_back


@pytest.mark.parametrize("seed", [0, 1, 3, 4])
def test_java_continues_a_lane_python_wrote_over_sessions_as_python_would(
        tool, jvm, tmp_path, seed):
    lane = str(tmp_path / "lane")
    if seed % 5 in (1, 4):
        make_lane(lane, seed)                 # compacted (then written on), or compacted whole
    else:
        write_lane(lane, seed)
    with Journal.read(lane) as snap:
        before = {"max_record_id": snap.max_record_id, "max_tx": snap._state.max_tx_id,
                  "prepared": [p.tx_id for p in snap.prepared()],
                  "open": list(snap.open_transactions()), "files": len(os.listdir(lane))}
    python_copy = str(tmp_path / "python")
    shutil.copytree(lane, python_copy)
    java_commands, steps = continuation(seed, before)
    opened, acks = run_tool(tool, lane, java_commands, options=dict(JAVA_OPTIONS, userVersion=0))
    assert opened["rolled_back_tx_ids"] == before["open"]
    assert opened["prepared_tx_ids"] == before["prepared"]
    assert acks[0]["id"] == before["max_record_id"] + 1 and acks[1]["id"] == before["max_tx"] + 1
    assert python_does(python_copy, steps) == before["open"]
    java_view, python_view = read_back(lane), read_back(python_copy)
    for key in ("live", "prepared", "open"):
        assert java_view[key] == python_view[key], key
    assert java_view["report"].torn_tail is None and not java_view["report"].recoveries
    assert len(java_view["prepared"]) == 1                # the old ones ended, one new
    assert len(java_view["open"]) == 1
    assert_python_writer_opens_clean(lane, list(java_view["open"]))
    python_appends(lane, seed)
    assert_agree(jvm, lane)


def test_a_lane_with_files_but_no_data_is_appended_to_in_its_lowest_id_file(tool, tmp_path):
    lane = str(tmp_path / "lane")
    Journal.open(lane, **PY_OPTIONS).close()                  # two empty files
    ids = sorted(read_header(os.path.join(lane, n)).file_id for n in os.listdir(lane)
                 if n.endswith(".sjd"))
    opened, acks = run_tool(tool, lane, [{"op": "add", "id": 1, "body": "01", "sync": True},
                                         {"op": "close"}])
    assert opened["file_id"] == acks[0]["file_id"] == ids[0]
    assert [r[0] for r in read_back(lane)["live"]] == [1]
    assert_python_writer_opens_clean(lane, [])


def test_a_file_promising_a_smaller_sync_window_is_sealed_by_a_roll_at_open(tool, tmp_path):
    lane = str(tmp_path / "lane")
    with Journal.open(lane, **dict(PY_OPTIONS, maxIO=1)) as journal:    # window 8k < Java's 16k
        journal.append_add(1, b"python", sync=True)
    newest = scan_lane(lane)[-1]
    opened, _acks = run_tool(tool, lane, [{"op": "add", "id": 2, "body": "02", "sync": True},
                                          {"op": "close"}])
    assert opened["file_id"] > newest.file_id
    header = read_header(scan_lane(lane)[-1].path)
    assert (header.prev_file_id, header.prev_end, header.sync_window) == \
        (newest.file_id, newest.records[-1].offset + newest.records[-1].size, 2 * BUFFER)
    assert [r[0] for r in read_back(lane)["live"]] == [1, 2]
    assert_python_writer_opens_clean(lane, [])


def test_a_lane_holding_a_file_with_a_bad_header_is_refused_unchanged(tool, tmp_path):
    lane = str(tmp_path / "lane")
    python_lane(lane, 5)
    with open(os.path.join(lane, "data-0000000009.sjd"), "wb") as handle:
        handle.write(b"not a data file".ljust(32 << 10, b"\0"))
    before = sorted(os.listdir(lane))
    error = tool_error(tool, lane, [{"op": "sync"}])
    assert "data-0000000009.sjd" in error and "attic/" in error and "Journal.open" in error
    assert sorted(os.listdir(lane)) == before


# --- torn tails --------------------------------------------------------------------------------------
def python_lane(lane: str, records: int = 30) -> list:
    rng = random.Random(records)
    bodies = []
    with Journal.open(lane, **PY_OPTIONS) as journal:
        for record_id in range(1, records + 1):
            bodies.append(rng.randbytes(rng.choice(SIZES[:10])))
            journal.append_add(record_id, bodies[-1], user_type=2, sync=False)
    return bodies


@pytest.mark.parametrize("tail", ["records dropped", "torn record of its own"])
def test_a_torn_tail_is_zeroed_before_java_appends(tool, jvm, tmp_path, tail):
    lane = str(tmp_path / "lane")
    bodies = python_lane(lane)
    newest = scan_lane(lane)[-1]
    end = newest.records[-1].offset + newest.records[-1].size
    fid32 = layout.file_id32(newest.file_id)
    stray = bytearray(layout.record_size(300))
    assert end + 8 + len(stray) <= os.path.getsize(newest.path), "no room for the tail"
    codec_python.encode_record(stray, 0, layout.ADD, 0, 2, fid32, 5000, 0, 0, b"s" * 300)
    if tail == "records dropped":
        patch(newest.path, end, b"\xee" * 8 + bytes(stray))      # garbage, then a whole record
    else:
        stray[30] ^= 0xFF                                        # its CRC fails: torn
        patch(newest.path, end, bytes(stray))
    torn = read_back(lane)["report"].torn_tail
    assert torn is not None and torn.offset == end
    assert torn.records_dropped == (1 if tail == "records dropped" else 0)
    commands = [{"op": "add", "id": 100 + n, "type": 1, "body": bytes([n]) .hex() * 50,
                 "sync": n % 3 == 0} for n in range(10)] + [{"op": "close"}]
    opened, _acks = run_tool(tool, lane, commands)
    assert opened["torn_tail"]["offset"] == end
    assert opened["file_id"] == newest.file_id             # continued, not rolled away
    seen = read_back(lane)
    assert seen["report"].torn_tail is None
    assert [r[0] for r in seen["live"]] == list(range(1, 31)) + list(range(100, 110))
    assert [r[2] for r in seen["live"][:30]] == bodies
    first_write = -(-end // 512) * 512
    assert read_at(newest.path, end, first_write - end) == bytes(first_write - end)
    assert_python_writer_opens_clean(lane, [])
    assert_agree(jvm, lane)


# --- SIGKILL -----------------------------------------------------------------------------------------
SYNCED = ("add", "prepare", "commit", "rollback")


def durable_upto(commands: list, acked: int) -> int:
    """Index of the last command of the first ``acked`` whose ack means durable, or -1."""
    last = -1
    for i, command in enumerate(commands[:acked]):
        if command["op"] in ("sync", "close") or (command["op"] in SYNCED and command.get("sync")) or \
                (command["op"] == "add" and len(command["body"]) // 2 + 40 > BUFFER):
            last = i
    return last


def check_after_kill(lane: str, commands: list, acked: int, bodies: dict, kept: set) -> dict:
    """Python's load is clean (a torn tail allowed); every record of an acknowledged
    synced command, or before one, is there, and every record an earlier load saw
    (``kept``, grown here); nothing is there that was never written."""
    seen = read_back(lane)
    report = seen["report"]
    assert not report.recoveries and not report.broken_tx_ids and not report.warnings
    live = {record_id: (user_type, body) for record_id, user_type, body in seen["live"]}
    assert kept <= live.keys(), f"records seen before are gone: {sorted(kept - live.keys())[:5]}"
    kept |= live.keys()
    for record_id, value in live.items():
        assert bodies[record_id] == value, f"record {record_id} is not what was written"
    durable = durable_upto(commands, acked)
    tx_records: dict[int, list] = {}
    for i, command in enumerate(commands):
        if command["op"] == "add_tx":
            tx_records.setdefault(command["tx"], []).append(command["id"])
        if i > durable:
            continue
        if command["op"] == "add":
            assert command["id"] in live, f"acknowledged record {command['id']} is lost"
        elif command["op"] == "commit":
            assert all(r in live for r in tx_records[command["tx"]]), "a durable commit is lost"
        elif command["op"] == "rollback":
            assert not any(r in live for r in tx_records[command["tx"]])
        elif command["op"] == "prepare":
            ended = any(c["op"] in ("commit", "rollback") and c.get("tx") == command["tx"]
                        for c in commands[i:])
            assert command["tx"] in seen["prepared"] or ended, "a durable prepare is lost"
    return seen


def killed_sessions(tool, lane: str, tmp_path, sessions: int, seed: int, ops: int) -> int:
    """Java appender sessions on ``lane``, each but the last SIGKILLed after a random
    number of acknowledged commands; after each, ``check_after_kill``. The kills."""
    java, classpath = tool
    rng = random.Random(seed * 7)
    bodies: dict[int, tuple] = {}
    kept: set[int] = set()
    next_id, next_tx, kills = 1, 1, 0
    expect_rolled_back: list | None = None
    for session in range(sessions):
        script = random_script(seed * 1000 + session, ops, next_id, next_tx, sync_share=0.15)
        next_id, next_tx = script.next_id, script.next_tx
        bodies.update(script.bodies)
        commands = script.commands
        final = session == sessions - 1
        script_file = tmp_path / f"script-{session}.jsonl"
        script_file.write_text("".join(json.dumps(c) + "\n" for c in commands))
        with open(script_file) as stdin:
            child = subprocess.Popen([java, "-cp", classpath, TOOL, lane, json.dumps(JAVA_OPTIONS)],
                                     stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
            try:
                opened = json.loads(child.stdout.readline())
                assert "error" not in opened, opened
                if expect_rolled_back is not None:
                    assert opened["rolled_back_tx_ids"] == expect_rolled_back
                wanted = len(commands) if final else rng.randint(1, len(commands) * 2 // 3)
                acked = 0
                while acked < wanted:
                    line = child.stdout.readline()
                    assert line, f"the tool ended early: {child.stderr.read()}"
                    assert "error" not in json.loads(line), line
                    acked += 1
                if not final:
                    time.sleep(rng.random() * 0.005)
                    child.send_signal(signal.SIGKILL)
                    kills += child.wait(timeout=30) == -signal.SIGKILL
            finally:
                if child.poll() is None and final:
                    child.wait(timeout=60)
                child.kill()
                child.wait()
                child.stdout.close()
                child.stderr.close()
        seen = check_after_kill(lane, commands, acked, bodies, kept)
        expect_rolled_back = list(seen["open"])
    return kills


def test_java_killed_at_random_moments_loses_no_acknowledged_record_and_continues(
        tool, jvm, tmp_path):
    lane = str(tmp_path / "lane")
    kills = killed_sessions(tool, lane, tmp_path, sessions=7, seed=1, ops=700)
    assert kills >= 5, "the appender finished before it was killed: make the scripts longer"
    with Journal.open(lane, **PY_OPTIONS) as journal:
        assert journal.report.torn_tail is None and not journal.report.recoveries
    assert_agree(jvm, lane)


@pytest.mark.slow
def test_java_killed_beside_online_compactions_and_readers_loses_nothing(tool, jvm, tmp_path):
    """Compactions (forced) and checking readers run on the lane the whole time
    while Java appends and is SIGKILLed: the compactor never touches the file
    Java appends to, Java never reads an old file again, so every acknowledged
    record survives every swap, and every record a reader sees is one written."""
    lane = str(tmp_path / "lane")
    os.makedirs(lane)
    stop, failures, counts = threading.Event(), [], {"compactions": 0, "snapshots": 0}

    def beside() -> None:
        rng = random.Random(11)
        try:
            while not stop.is_set():
                if rng.random() < 0.5:
                    report = compact_lane(lane, force=True, swap_wait=5, **PY_OPTIONS)
                    counts["compactions"] += report.compacted
                elif any(name.endswith(".sjd") for name in os.listdir(lane)):
                    with Journal.read(lane) as snapshot:
                        assert not snapshot.report.recoveries and not snapshot.report.warnings
                        sum(1 for _record in snapshot.records())
                    counts["snapshots"] += 1
                time.sleep(rng.random() * 0.05)
        except Exception as error:        # noqa: BLE001 - failed below
            failures.append(error)

    thread = threading.Thread(target=beside, daemon=True)
    thread.start()
    try:
        kills = killed_sessions(tool, lane, tmp_path, sessions=12, seed=2, ops=900)
    finally:
        stop.set()
        thread.join(120)
    assert not thread.is_alive(), "a compaction or a reader hung"
    assert not failures, failures[0]
    assert kills >= 8 and counts["compactions"] >= 5 and counts["snapshots"] >= 5, (kills, counts)
    with Journal.open(lane, **PY_OPTIONS) as journal:
        assert journal.report.torn_tail is None and not journal.report.recoveries
    assert_agree(jvm, lane)
    print(f"{kills} Java appender kills beside {counts['compactions']} compactions and "
          f"{counts['snapshots']} snapshots")
