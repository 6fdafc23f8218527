"""Writes the seed corpus (tests/fuzz/corpus/<target>/) from real journals.

``python -m tests.fuzz.make_corpus`` replaces the corpus: each seed is a file
the code itself wrote (lanes written through Journal, a compaction cut short
by a crash point before its swap finished, requests and decisions written by
their modules), cut down to what a target reads. Seeds are named by what they
hold; the whole corpus stays well under 1 MB.
"""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import tempfile

from sparkjournal.events.commit_log import CommitLog
from sparkjournal.events.deletions import DELETION_VECTOR, encode_vector
from sparkjournal.events.requests import submit
from sparkjournal.format import layout
from sparkjournal.format.codec import CODEC
from sparkjournal.journal.journal import Journal
from sparkjournal.journal.swap import CONTROL_FILE
from tests.fuzz.lane_image import read_lane

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
OPTIONS = {"fileSize": "16k", "bufferSize": "8k", "minFiles": 2, "journalType": "NIO"}
READ_ONLY, RECOVER, WRITER = 0, 1, 4


def basic_lane(lane: str) -> None:
    """Every record type in one file: plain records, a committed, a rolled
    back and a prepared transaction, a deletion vector."""
    with Journal.open(lane, **OPTIONS) as journal:
        for record_id in range(1, 6):
            journal.append_add(record_id, b"event %d" % record_id, user_type=1)
        journal.append_update(2, b"event 2, updated", user_type=1)
        journal.append_delete(3)
        journal.append_add(6, encode_vector(1, [0, 2]), user_type=DELETION_VECTOR)
        for tx_id, end in ((1, "commit"), (2, "rollback"), (3, None)):
            journal.append_add_tx(tx_id, 10 + tx_id, b"tx body %d" % tx_id, user_type=1)
            journal.append_update_tx(tx_id, 1, b"event 1 in tx %d" % tx_id, user_type=1)
            journal.append_delete_tx(tx_id, 4)
            journal.prepare(tx_id, b"xid-%d" % tx_id)
            if end:
                getattr(journal, end)(tx_id)
    submit(lane, "delete", {"records": {"5": None, "2": [1, 3]}})


def rolled_lane(lane: str) -> None:
    """Three files with data (rolls, previous-file fields) and a transaction
    whose records span two files."""
    with Journal.open(lane, **OPTIONS) as journal:
        body = bytes(range(256))
        journal.append_add_tx(100, 1000, b"spans files")
        for record_id in range(1, 130):
            journal.append_add(record_id, body, sync=record_id % 10 == 0)
            if record_id % 3 == 0:
                journal.append_delete(record_id - 1, sync=False)
        journal.commit(100)


def large_lane(lane: str) -> None:
    """Bodies in large/ (largeRecordSize): the reference records and their files."""
    with Journal.open(lane, largeRecordSize=64, **OPTIONS) as journal:
        journal.append_add(1, b"small")
        journal.append_add(2, b"L" * 100)
        journal.append_add_tx(1, 3, b"T" * 80)
        journal.commit(1)


def torn_lane(lane: str) -> None:
    """The basic lane with its last record's body damaged: a torn tail."""
    basic_lane(lane)
    snapshot = Journal.read(lane)
    last = max(snapshot._state.live.values(), key=lambda v: (v[0], v[1]))
    path = snapshot._paths[last[0]]
    snapshot.close()
    with open(path, "r+b") as handle:
        handle.seek(last[1] + layout.RECORD_HEADER_SIZE)
        handle.write(b"\xff")


def compacted_lane(lane: str) -> None:
    """A compaction killed after its control file and its first rename: the
    lane as every load must see it (compact.ctl, .cmp, old files)."""
    rolled_lane(lane)
    with Journal.open(lane, **OPTIONS) as journal:
        for record_id in range(1, 120):
            if journal.get(record_id) is not None:
                journal.append_delete(record_id, sync=False)
        journal.append_add(5000, b"after the deletes")
    script = ("import sys; from sparkjournal.maintenance.compactor import compact_lane; "
              "compact_lane(sys.argv[1], force=True, fileSize='16k', bufferSize='8k', minFiles=2)")
    env = {**os.environ, "SPARKJOURNAL_CRASH_AT": "swap:renamed"}
    subprocess.run([sys.executable, "-c", script, lane], env=env, check=False)
    if not os.path.exists(os.path.join(lane, CONTROL_FILE)):
        raise RuntimeError("the compaction left no control file: the crash point moved")


def v1_header() -> bytes:
    fixed = layout.FILE_HEADER_V1.pack(layout.FILE_MAGIC, 1, 0, 7, 65536, 512, 0, 65536,
                                       1_700_000_000_000_000_000, 6, 8192)
    return fixed + CODEC.crc32c(fixed).to_bytes(4, "little")


def write(target: str, name: str, data: bytes) -> None:
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as handle:
        handle.write(data)


def data_files(lane: str):
    for name in sorted(os.listdir(lane)):
        if name.startswith("data-") and (name.endswith(".sjd") or name.endswith(".cmp")):
            with open(os.path.join(lane, name), "rb") as handle:
                yield name, handle.read()


def seeds_of_lane(tag: str, lane: str) -> None:
    for options, suffix in ((READ_ONLY, "read"), (RECOVER, "recover"), (WRITER | RECOVER, "writer")):
        write("loader", f"{tag}-{suffix}", read_lane(lane, options))
    for name, raw in data_files(lane):
        file_id = struct.unpack_from("<Q", raw, 16)[0]
        records = raw[layout.FILE_HEADER_SIZE:].rstrip(b"\0")
        if records:
            prefix = struct.pack("<I", layout.file_id32(file_id))
            write("records", f"{tag}-{name}", b"\0" + prefix + records)
            write("records", f"{tag}-{name}-fix", b"\1" + prefix + records[:2048])
        write("header", f"{tag}-{name}", b"\0" + raw[:layout.FILE_HEADER_CRC_AT + 4])


def main() -> None:
    shutil.rmtree(CORPUS, ignore_errors=True)
    work = tempfile.mkdtemp(prefix="sj-corpus-")
    try:
        for tag, make in (("basic", basic_lane), ("rolled", rolled_lane), ("large", large_lane),
                          ("torn", torn_lane), ("compacted", compacted_lane)):
            lane = os.path.join(work, tag)
            make(lane)
            seeds_of_lane(tag, lane)
        write("header", "v1", b"\0" + v1_header())
        write("sidecars", "vector-rows", b"\0" + encode_vector(42, [0, 3, 7]))
        write("sidecars", "vector-all", b"\0" + encode_vector(42, None))
        basic = os.path.join(work, "basic")
        for name in os.listdir(os.path.join(basic, "requests")):
            with open(os.path.join(basic, "requests", name), "rb") as handle:
                write("sidecars", "request-delete", b"\1" + handle.read())
        with open(os.path.join(work, "compacted", CONTROL_FILE), "rb") as handle:
            control = handle.read()
        write("sidecars", "control", b"\2" + control)
        write("sidecars", "control-fix", b"\x82" + control)
        log = CommitLog(os.path.join(work, "_commits"))
        decision = log.record("query-1", 3, [{"node": "n1", "lane": "lane-000", "tx": 9,
                                              "host": "h", "root": "/r", "records": 2,
                                              "rows": 10, "bytes": 300}])
        write("sidecars", "decision", b"\3" + decision.to_json())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _s, fs in os.walk(CORPUS) for f in fs)
    print(f"corpus written to {CORPUS}: {total} bytes")


if __name__ == "__main__":
    main()
