"""Writes the golden lane corpus: one folder per case beside this file, each a
lane (``<case>/lane/``) and the reading every reader of format/FORMAT.md must
give of it (``<case>/expected.json``).

Run by hand, and only when the data file format changes (the checked-in files
are the corpus; no test runs this)::

    python tests/golden/lanes/generate.py

The lanes are written by the Python implementation's writing side
(``Journal.open`` with the NIO backend, 16k files so that files roll; the
maintenance compactor; the pager), then damaged byte by byte. Bodies, ids and
damage are fixed; file creation times, large ids and commit times are not,
which is why the corpus is produced once and checked in.

Where the answers come from: the live records, prepared and open
transactions, watermarks and outcomes are stated from what this script wrote
(``Model``) and the damage it did, by the spec's rules. The per-file scans
(``scans``) and the offsets of torn tails and damage are taken from the pure
Python codec's scan of the files written; this script then requires that the
Python reader gives the stated reading before it writes expected.json.

expected.json (numbers unsigned, names relative to the lane):

* ``outcome``: "ok", "damaged" (CorruptJournalError) or "newer-format"
  (FormatVersionError); ``error`` for the last two: ``kind`` (the outcome),
  ``file`` (the file named), ``offset`` (where the spec gives one, else
  null), ``at``: "load" (opening the lane fails) or "read" (the lane opens;
  reading the bodies of ``records`` whose entry says ``"error"`` fails);
* ``records``: the live records in snapshot order: ``id``, ``user_type``,
  ``large``, ``size``, and ``hex`` (up to 64 bytes) or ``sha256`` of the body;
* ``prepared``: ``tx_id``, ``xid`` (hex), ``record_ids``;
  ``open_transactions``: ``tx_id``, ``record_ids`` (a read-only reading
  rolls nothing back);
* ``report``: ``torn_tail`` (null or file, offset, records_dropped,
  bytes_dropped), ``broken_tx_ids``, ``prepared_tx_ids``, ``skipped`` (files
  a read-only load leaves aside for a bad header or a wrong size without
  records; a writer would move them to attic/);
* ``max_record_id``, ``max_tx_id``: the watermarks;
* ``pending_swap``: null or the control file's generation, old, new;
* ``scans``: for each data file whose header names a file id: ``file``,
  ``file_id`` and what a scan from 4096 with CRCs checked finds: ``n``,
  ``n_clean``, ``clean_end``, ``first_foreign``, ``foreign_reason`` and
  ``records`` ([type, flags, user_type, record_id, tx_id, offset, body_len,
  count] each);
* ``error.file`` is null where the spec names no file for the failure (a
  control file naming a file that is absent);
* ``recovery`` (recovered): the reading in recovery mode: the fields above
  and ``recoveries`` (``file``, ``offset``, ``lost_record_ids``,
  ``lost_tx_ids``), ``attic`` (where a writer moves the files);
* ``events`` (the events cases, pages_case.py): ``outcome``; when "ok",
  ``deleted`` ({record id: sorted positions, or null for every row}: the
  union of live deletion vectors and pending delete requests) and the
  visible rows (``columns``, ``rows``, ``rows_sha256``, ``first_rows``,
  ordered by _record_id, _row); else ``error``: ``kind``, ``what`` ("PAGE
  record" or "page file") and the ``record_id`` or ``file``;
* ``pages`` (the events case): each live PAGE record's ``record_id``,
  ``name``, ``size``, ``crc32c``, ``rows``, ``record_ids`` and the page's
  rows (``columns``, ``rows_sha256`` of their canonical JSON, ``first_rows``).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, CHECKOUT)
sys.path.insert(0, os.path.join(CHECKOUT, "tests"))

from sparkjournal import Journal  # noqa: E402
from sparkjournal.errors import CorruptJournalError, FormatVersionError  # noqa: E402
from sparkjournal.format import codec_python, layout  # noqa: E402
from sparkjournal.journal.datafile import BadHeader, WrongSize, decode_header  # noqa: E402
from sparkjournal.journal.swap import CONTROL_FILE, read_control  # noqa: E402
from lane_surgery import flip, patch, read_at, reseal  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OPTIONS = {"fileSize": "16k", "bufferSize": "4k", "maxIO": 1, "minFiles": 2,
           "journalType": "NIO", "largeRecordSize": "2k"}
HEX_UP_TO = 64


def body(seed: int, size: int) -> bytes:
    return bytes((seed * 31 + k * 7) % 251 for k in range(size))


def body_view(raw: bytes) -> dict:
    if len(raw) <= HEX_UP_TO:
        return {"hex": raw.hex()}
    return {"sha256": hashlib.sha256(raw).hexdigest()}


class Model:
    """What the lane holds by the spec, as written: live records in the order
    a snapshot lists them (first added; an update keeps the place), prepared
    and open transactions, the highest ids written."""

    def __init__(self):
        self.live: dict[int, tuple] = {}           # id -> (user type, body, large)
        self.txs: dict[int, dict] = {}             # open or prepared: {"ops", "xid"}
        self.max_record_id = self.max_tx_id = 0
        self.large_at = OPTIONS["largeRecordSize"]

    def seen(self, record_id=0, tx_id=0):
        self.max_record_id = max(self.max_record_id, record_id)
        self.max_tx_id = max(self.max_tx_id, tx_id)


class Writer:
    """Journal calls that keep a Model."""

    def __init__(self, journal: Journal, model: Model, large_from: int):
        self.j, self.m, self.large_from = journal, model, large_from

    def add(self, record_id, raw, user_type=0):
        self.j.append_add(record_id, raw, user_type=user_type, sync=False)
        self.m.live[record_id] = (user_type, raw, len(raw) > self.large_from)
        self.m.seen(record_id)

    def update(self, record_id, raw, user_type=0):
        self.j.append_update(record_id, raw, user_type=user_type, sync=False)
        self.m.live[record_id] = (user_type, raw, len(raw) > self.large_from)
        self.m.seen(record_id)

    def delete(self, record_id):
        self.j.append_delete(record_id, sync=False)
        del self.m.live[record_id]

    def tx(self, tx_id, ops):
        """ops: [("add"|"update", id, body, user type) | ("delete", id)]."""
        for op in ops:
            if op[0] == "add":
                self.j.append_add_tx(tx_id, op[1], op[2], user_type=op[3])
            elif op[0] == "update":
                self.j.append_update_tx(tx_id, op[1], op[2], user_type=op[3])
            else:
                self.j.append_delete_tx(tx_id, op[1])
            self.m.seen(op[1], tx_id)
        self.m.txs[tx_id] = {"ops": ops, "xid": None}

    def prepare(self, tx_id, xid):
        self.j.prepare(tx_id, xid, sync=False)
        self.m.txs[tx_id]["xid"] = xid

    def commit(self, tx_id):
        self.j.commit(tx_id, sync=False)
        for op in self.m.txs.pop(tx_id)["ops"]:
            if op[0] == "delete":
                self.m.live.pop(op[1], None)
            else:
                self.m.live[op[1]] = (op[3], op[2], len(op[2]) > self.large_from)

    def rollback(self, tx_id):
        self.j.rollback(tx_id, sync=False)
        del self.m.txs[tx_id]


def writer(lane: str, model: Model, options=None):
    options = {**OPTIONS, **(options or {})}
    journal = Journal.open(lane, **options)
    large_from = options_large_from(options)
    return journal, Writer(journal, model, large_from)


def options_large_from(options) -> int:
    """Bodies above this go to large/ (largeRecordSize, else what does not fit a file)."""
    units = {"k": 1 << 10, "m": 1 << 20}
    def size(text):
        text = str(text)
        return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
    if size(options.get("largeRecordSize", 0)):
        return size(options["largeRecordSize"])
    return size(options["fileSize"]) - layout.FILE_HEADER_SIZE - layout.RECORD_HEADER_SIZE


# --- surgery ------------------------------------------------------------------------------------
def header_of(path: str):
    try:
        return decode_header(read_at(path, 0, layout.FILE_HEADER_SIZE), path)
    except WrongSize as wrong:
        return wrong.header


def data_names(lane: str) -> list[str]:
    return sorted(n for n in os.listdir(lane) if n.endswith(".sjd") or n.endswith(".sjd.cmp"))


def scan_file(path: str, file_id: int) -> dict:
    with open(path, "rb") as handle:
        raw = handle.read()
    s = codec_python.scan(raw, layout.FILE_HEADER_SIZE, layout.file_id32(file_id), True)
    return {"n": s.n, "n_clean": s.n_clean, "clean_end": s.clean_end,
            "first_foreign": s.first_foreign, "foreign_reason": s.foreign_reason,
            "records": [[int(s.types[i]), int(s.flags[i]), int(s.user_types[i]),
                         int(s.record_ids[i]), int(s.tx_ids[i]), int(s.offsets[i]),
                         int(s.body_lens[i]), int(s.counts[i])] for i in range(s.n)]}


def scans(lane: str) -> list[dict]:
    out = []
    for name in data_names(lane):
        path = os.path.join(lane, name)
        try:
            header = header_of(path)
        except (BadHeader, FormatVersionError):
            continue
        out.append({"file": name, "file_id": header.file_id, **scan_file(path, header.file_id)})
    return out


def own_scans(lane: str) -> dict:
    """{file name: its scan} of the data files of the lane (headers that read)."""
    return {s["file"]: s for s in scans(lane)}


def with_data(lane: str) -> list[tuple[str, dict]]:
    """(path, scan) of the files holding records of their own id, by file id."""
    found = []
    for s in scans(lane):
        if s["n_clean"] and not s["file"].endswith(".cmp"):
            found.append((s["file_id"], os.path.join(lane, s["file"]), s))
    return [(path, s) for _id, path, s in sorted(found)]


# --- the expected reading -------------------------------------------------------------------------
def reading(model: Model, lane: str, **extra) -> dict:
    records = []
    for record_id, (user_type, raw, large) in model.live.items():
        records.append({"id": record_id, "user_type": user_type, "large": large,
                        "size": len(raw), **body_view(raw)})
    prepared = [{"tx_id": tx_id, "xid": tx["xid"].hex(),
                 "record_ids": [op[1] for op in tx["ops"]]}
                for tx_id, tx in model.txs.items() if tx["xid"] is not None]
    open_txs = [{"tx_id": tx_id, "record_ids": [op[1] for op in tx["ops"]]}
                for tx_id, tx in model.txs.items() if tx["xid"] is None]
    out = {"outcome": "ok", "records": records, "prepared": prepared,
           "open_transactions": open_txs,
           "report": {"torn_tail": None, "broken_tx_ids": [],
                      "prepared_tx_ids": [p["tx_id"] for p in prepared], "skipped": []},
           "max_record_id": model.max_record_id, "max_tx_id": model.max_tx_id,
           "pending_swap": None}
    for key, value in extra.items():
        if key in out["report"]:
            out["report"][key] = value
        else:
            out[key] = value
    out["scans"] = scans(lane)
    return out


def failing(lane: str, kind: str, file: str, offset, at: str = "load", **extra) -> dict:
    return {"outcome": kind, "error": {"kind": kind, "file": file, "offset": offset, "at": at},
            **extra, "scans": scans(lane)}


def python_reading(lane: str, **options) -> dict:
    """What Journal.read gives, in expected.json's form (the self-check)."""
    try:
        with Journal.read(lane, **options) as snap:
            records, errors = [], []
            for record in snap.records():
                entry = {"id": record.record_id, "user_type": record.user_type,
                         "large": record.large}
                try:
                    raw = bytes(record.body)
                    entry.update(size=len(raw), **body_view(raw))
                except CorruptJournalError as error:
                    entry["error"] = "damaged"
                    errors.append(os.path.relpath(error.path, lane))
                records.append(entry)
            prepared = [{"tx_id": p.tx_id, "xid": p.xid.hex(), "record_ids": p.record_ids}
                        for p in snap.prepared()]
            report = snap.report
            torn = report.torn_tail
            out = {"outcome": "ok", "records": records, "prepared": prepared,
                   "open_transactions": [{"tx_id": t, "record_ids": ids}
                                         for t, ids in snap.open_transactions().items()],
                   "report": {"torn_tail": None if torn is None else {
                       "file": os.path.relpath(torn.file, lane), "offset": torn.offset,
                       "records_dropped": torn.records_dropped,
                       "bytes_dropped": torn.bytes_dropped},
                       "broken_tx_ids": list(report.broken_tx_ids),
                       "prepared_tx_ids": list(report.prepared_tx_ids),
                       "skipped": sorted(os.path.basename(w.split(": ")[0]) for w in report.warnings)},
                   "max_record_id": snap.max_record_id, "max_tx_id": snap._state.max_tx_id}
            if report.recoveries:
                out["recoveries"] = [{"file": os.path.relpath(r.file, lane), "offset": r.offset,
                                      "lost_record_ids": r.lost_record_ids,
                                      "lost_tx_ids": r.lost_tx_ids} for r in report.recoveries]
            control = read_control(lane)
            out["pending_swap"] = None if control is None else {
                "generation": control.generation, "old": [list(p) for p in control.old],
                "new": [list(p) for p in control.new]}
            return out, errors
    except (CorruptJournalError, FormatVersionError) as error:
        kind = "damaged" if isinstance(error, CorruptJournalError) else "newer-format"
        return {"outcome": kind, "error": {"kind": kind, "file": os.path.relpath(error.path, lane),
                                           "offset": getattr(error, "offset", None)}}, []


def check(lane: str, expected: dict) -> None:
    found, errors = python_reading(lane)
    if expected["outcome"] != "ok" and expected["error"]["at"] == "load":
        assert found["outcome"] == expected["outcome"], found
        if expected["error"]["file"] is not None:
            assert found["error"]["file"] == expected["error"]["file"], found
        if expected["error"]["offset"] is not None:
            assert found["error"]["offset"] == expected["error"]["offset"], found
        if "recovery" in expected:
            found, _errors = python_reading(lane, recover=True)
            for key in ("records", "prepared", "open_transactions", "report", "max_record_id",
                        "max_tx_id", "pending_swap", "recoveries"):
                assert found[key] == expected["recovery"][key], \
                    f"{lane} recovery {key}:\n{found[key]}\n{expected['recovery'][key]}"
        return
    for key in ("records", "prepared", "open_transactions", "report", "max_record_id",
                "max_tx_id", "pending_swap"):
        assert found[key] == expected[key], f"{lane} {key}:\n{found[key]}\n{expected[key]}"
    if "error" in expected:
        assert expected["error"]["file"] in errors, errors


# --- the cases ------------------------------------------------------------------------------------
def plain(lane):
    """ADD, UPDATE, DELETE over two writers; files roll."""
    m = Model()
    j, w = writer(lane, m)
    for i in range(1, 31):
        w.add(i, body(i, (i * 97) % 900), user_type=i % 4)
    w.update(3, body(1003, 10), user_type=9)
    w.delete(4)
    w.update(30, b"", user_type=65535)
    j.close()
    j, w = writer(lane, m)
    for i in range(31, 41):
        w.add(i, body(i, 300 + i))
    w.delete(1)
    w.delete(31)
    w.add(1, body(5001, 5))                          # a deleted id added again: listed last
    w.update(2, body(5002, 700), user_type=2)
    j.close()
    return m, {}


def transactions(lane):
    """Committed, rolled back, prepared (then decided by a later writer) and
    prepared-only transactions, and one left open by the last writer."""
    m = Model()
    j, w = writer(lane, m)
    for i in range(1, 11):
        w.add(i, body(i, 200), user_type=1)
    w.tx(1, [("add", 11, body(11, 150), 5), ("update", 2, body(102, 40), 6), ("delete", 3)])
    w.commit(1)
    w.tx(2, [("add", 12, body(12, 80), 5), ("delete", 4)])
    w.rollback(2)
    w.tx(3, [("add", 13, body(13, 90), 5)])
    w.prepare(3, b"xid-three")
    w.tx(4, [("add", 14, body(14, 60), 5), ("update", 5, body(105, 20), 7)])
    w.prepare(4, b"")
    w.tx(5, [("add", 15, body(15, 70), 5)])
    w.prepare(5, bytes(range(40)))
    j.close()
    j, w = writer(lane, m)
    w.commit(3)
    w.rollback(4)
    w.tx(6, [("add", 16, body(16, 500), 5), ("delete", 6)])
    w.prepare(6, b"\x00\xff left prepared")
    w.tx(7, [("add", 17, body(17, 30), 5), ("update", 7, body(107, 30), 8)])
    j.close()            # 5 and 6 prepared, 7 open: a writer would roll 7 back, a reader lists it
    return m, {}


def broken_count(lane):
    """A COMMIT whose per-file count is not its tx's record count in the file:
    the transaction is not applied and is reported broken."""
    m = Model()
    j, w = writer(lane, m)
    for i in range(1, 6):
        w.add(i, body(i, 100))
    w.tx(1, [("add", 6, body(6, 50), 5)])
    w.commit(1)
    w.tx(2, [("add", 7, body(7, 50), 5), ("delete", 1)])
    w.j.commit(2, sync=False)                        # the model does not apply it: it breaks
    del m.txs[2]
    w.add(8, body(8, 20))
    j.close()
    path, s = with_data(lane)[-1]
    commit = [r for r in s["records"] if r[0] == layout.COMMIT][-1]
    patch(path, commit[5] + 32, (7).to_bytes(4, "little"))
    reseal(path, commit[5])
    return m, {"broken_tx_ids": [2]}


def reused(lane):
    """Files freed and reused by a later writer: stale records of their earlier
    use lie after the new records and end the data cleanly."""
    m = Model()
    j, w = writer(lane, m)
    for i in range(1, 61):
        w.add(i, body(i, 700))
    for i in range(1, 59):
        w.delete(i)
    j.close()
    for round_ in range(2):
        j, w = writer(lane, m)
        for i in range(100 + 40 * round_, 130 + 40 * round_):
            w.add(i, body(i, 500))
        j.close()
    stale = [s for s in scans(lane) if s["first_foreign"] > 0 and s["n_clean"]
             and s["n"] == s["n_clean"]]
    assert stale, "no reused file ends on stale records"
    return m, {}


def free_by_header(lane):
    """A file free by its header holding a valid record of its own id: the
    load takes it as empty without scanning it."""
    m = Model()
    j, w = writer(lane, m, {"minFiles": 4})
    for i in range(1, 6):
        w.add(i, body(i, 300))
    j.close()
    from sparkjournal.journal.free_by_header import free_ids
    headers = {s["file"]: header_of(os.path.join(lane, s["file"])) for s in scans(lane)}
    free = sorted(free_ids(headers.values()))
    assert free
    name = next(n for n, h in headers.items() if h.file_id == free[-1])
    block = bytearray(layout.record_size(16))
    codec_python.encode_record(block, 0, layout.ADD, 0, 0, layout.file_id32(free[-1]),
                               10**9, 0, 0, b"planted-record!!")
    patch(os.path.join(lane, name), layout.FILE_HEADER_SIZE, bytes(block))
    return m, {}


def torn_lane(lane, m):
    j, w = writer(lane, m)
    for i in range(1, 31):
        w.add(i, body(i, 600))
    for i in range(31, 35):
        w.add(i, body(i, 100))
    j.close()


def torn_tail(lane):
    """The newest file's second-last record torn (its CRC fails), the last one
    whole within the sync window: the last is dropped and reported."""
    m = Model()
    torn_lane(lane, m)
    path, s = with_data(lane)[-1]
    second, last = s["records"][-2], s["records"][-1]
    flip(path, second[5] + 17)
    for record in (second, last):
        del m.live[record[3]]
    m.max_record_id = max(m.live)
    end = last[5] + layout.record_size(last[6])
    torn = {"file": os.path.basename(path), "offset": second[5], "records_dropped": 1,
            "bytes_dropped": end - second[5]}
    return m, {"torn_tail": torn}


def damaged_sealed(lane):
    """A flipped body byte in a file with a successor: damage before the tail."""
    m = Model()
    torn_lane(lane, m)
    path, s = with_data(lane)[0]
    victim = s["records"][len(s["records"]) // 2]
    flip(path, victim[5] + layout.RECORD_HEADER_SIZE + 10)
    return None, {"fail": ("damaged", os.path.basename(path), victim[5])}


def skipped_headers(lane):
    """A pool file with a bad magic and a file of the wrong size holding no
    record: left aside (skipped by a reader, moved to attic/ by a writer)."""
    m = Model()
    j, w = writer(lane, m, {"minFiles": 4})
    for i in range(1, 6):
        w.add(i, body(i, 300))
    j.close()
    pool = [s["file"] for s in scans(lane) if not s["n_clean"]]
    patch(os.path.join(lane, pool[-1]), 3, b"'")
    source = os.path.join(lane, pool[0])
    with open(os.path.join(lane, "data-9999999999.sjd"), "wb") as handle:
        handle.write(read_at(source, 0, 4096) + bytes(100))
    os.unlink(source)
    return m, {"skipped": sorted([pool[-1], "data-9999999999.sjd"])}


def wrong_size(lane):
    """A file holding records cut short by 4096 bytes: damage, not a skip."""
    m = Model()
    torn_lane(lane, m)
    path, _s = with_data(lane)[0]
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) - 4096)
    header = header_of(path)
    s = scan_file(path, header.file_id)
    return None, {"fail": ("damaged", os.path.basename(path), min(s["clean_end"], os.path.getsize(path)))}


def newer_format(lane):
    """A data file header of version 3: refused, nothing changed."""
    m = Model()
    torn_lane(lane, m)
    path, _s = with_data(lane)[0]
    raw = bytearray(read_at(path, 0, 4096))
    raw[8:12] = (3).to_bytes(4, "little")
    raw[88:92] = codec_python.crc32c(bytes(raw[:88])).to_bytes(4, "little")
    patch(path, 0, bytes(raw))
    return None, {"fail": ("newer-format", os.path.basename(path), None)}


def version_1(lane):
    """A file whose header is version 1 (no watermark, CRC at 72): still read."""
    m = Model()
    torn_lane(lane, m)
    path, _s = with_data(lane)[0]
    raw = bytearray(read_at(path, 0, 4096))
    raw[8:12] = (1).to_bytes(4, "little")
    raw[72:92] = bytes(20)
    raw[72:76] = codec_python.crc32c(bytes(raw[:72])).to_bytes(4, "little")
    patch(path, 0, bytes(raw))
    return m, {}



def damage_past_window(lane):
    """The newest file's first record damaged, valid records of the file
    following it further than the header's sync window: damage before the
    tail, not a torn tail."""
    m = Model()
    torn_lane(lane, m)
    path, s = with_data(lane)[-1]
    first, last = s["records"][0], s["records"][-1]
    assert last[5] + layout.record_size(last[6]) - first[5] > header_of(path).sync_window
    flip(path, first[5] + layout.RECORD_HEADER_SIZE + 10)
    return None, {"fail": ("damaged", os.path.basename(path), first[5])}


def torn_nothing(lane):
    """The newest file's last record torn (valid in all but its CRC) and no
    record after it: a torn tail of no complete record, reported with nothing
    dropped."""
    m = Model()
    torn_lane(lane, m)
    path, s = with_data(lane)[-1]
    last = s["records"][-1]
    flip(path, last[5] + layout.RECORD_HEADER_SIZE + 3)
    del m.live[last[3]]
    m.max_record_id = max(m.live)
    torn = {"file": os.path.basename(path), "offset": last[5], "records_dropped": 0,
            "bytes_dropped": 0}
    return m, {"torn_tail": torn}


def short_of_previous_end(lane):
    """A sealed file's last record zeroed: its data ends cleanly, but before
    where its successor's header says it ended: damage at that end."""
    m = Model()
    torn_lane(lane, m)
    (path, s), (successor, _s) = with_data(lane)[:2]
    last = s["records"][-1]
    end = last[5] + layout.record_size(last[6])
    assert header_of(successor).prev_end == end
    patch(path, last[5], bytes(end - last[5]))
    return None, {"fail": ("damaged", os.path.basename(path), last[5])}


def compacted_lane(lane, m):
    """A small lane compacted and swapped: its older files are written whole, with a sealed end."""
    from sparkjournal.maintenance.compactor import compact_lane
    j, w = writer(lane, m)
    for i in range(1, 61):
        w.add(i, body(i, 400))
    for i in range(1, 61):
        if i % 3:
            w.delete(i)
    for i in range(61, 65):
        w.add(i, body(i, 300))
    j.close()
    report = compact_lane(lane, force=True, **OPTIONS)
    assert report.compacted and not report.swap_deferred, report
    sealed = [(os.path.join(lane, s["file"]), s) for s in scans(lane)
              if header_of(os.path.join(lane, s["file"])).sealed_end and s["n_clean"]]
    assert sealed
    return sealed


def compacted_damaged(lane):
    """A compacted file (sealed end) whose last record is zeroed: its data
    ends cleanly but not at its sealed end, which is damage wherever the file
    stands."""
    path, s = compacted_lane(lane, Model())[0]
    last = s["records"][-1]
    end = last[5] + layout.record_size(last[6])
    assert header_of(path).sealed_end == end
    patch(path, last[5], bytes(end - last[5]))
    return None, {"fail": ("damaged", os.path.basename(path), last[5])}


def stale_own_id(lane):
    """Stale bytes past the end of data that hold the file's id at a record
    header's place by chance, in a sealed file (a type no record has) and in
    the newest file (a body length past the file's end): not a record of the
    file valid in all but its CRC, so stale, a clean end of data; no damage,
    no torn tail."""
    m = Model()
    torn_lane(lane, m)
    (sealed, s1), (newest, s2) = with_data(lane)[:2]
    for path, s, rtype, body_len in ((sealed, s1, 42, 16), (newest, s2, layout.ADD, 1 << 30)):
        last = s["records"][-1]
        end = last[5] + layout.record_size(last[6])
        fid = layout.file_id32(header_of(path).file_id)
        stale = (0x5EA1B0D1).to_bytes(4, "little") + bytes([rtype, 0]) + (0).to_bytes(2, "little") \
            + fid.to_bytes(4, "little") + body_len.to_bytes(4, "little") + bytes(range(1, 25))
        assert read_at(path, end, len(stale)) == bytes(len(stale))
        patch(path, end, stale)
    return m, {}


LARGE_OPTIONS = {"largeRecordSize": 0}


def write_large(lane, m):
    j, w = writer(lane, m, LARGE_OPTIONS)
    w.add(1, body(1, 100))
    w.add(2, body(2, 6000), user_type=3)             # bigger than the buffer: written alone
    w.add(3, body(3, 20000), user_type=4)            # bigger than a file: large/
    w.add(4, body(4, 13000))                         # large
    w.update(1, body(101, 15000), user_type=2)       # an update to a large body
    w.add(5, body(5, 12500))                         # large
    w.delete(5)
    w.add(6, body(6, 50))
    j.close()


def large(lane):
    """Records written alone and large records (bodies in large/)."""
    m = Model()
    write_large(lane, m)
    return m, {}


def large_damaged(lane):
    """One large body missing, one cut short: the lane opens; reading either
    body fails naming its file."""
    m = Model()
    write_large(lane, m)
    with Journal.read(lane) as snap:
        paths = {}
        for record in snap.records():
            if record.large:
                ref = read_at(snap._paths[record.file_id], record.offset + 40, 24)
                paths[record.record_id] = snap.large.path(int.from_bytes(ref[:8], "little"))
    os.unlink(paths[3])
    with open(paths[4], "r+b") as handle:
        handle.truncate(1000)
    return m, {"read_errors": {3: os.path.relpath(paths[3], lane), 4: os.path.relpath(paths[4], lane)}}


def swap_lane(lane, m):
    from sparkjournal.maintenance.compactor import compact_lane
    j, w = writer(lane, m)
    for i in range(1, 101):
        w.add(i, body(i, 400))
    for i in range(1, 101):
        if i % 3:
            w.delete(i)
    w.tx(1, [("add", 200, body(200, 80), 5)])
    w.prepare(1, b"waits")
    for i in range(101, 109):
        w.add(i, body(i, 300))
    j.close()
    with Journal.read(lane):                         # a reader holds the swap off
        report = compact_lane(lane, force=True, swap_wait=0.01, **OPTIONS)
    assert report.compacted and report.swap_deferred, report
    control = read_control(lane)
    name = sorted(n for n, _id in control.new)[0]
    os.replace(os.path.join(lane, name + ".cmp"), os.path.join(lane, name))   # the swap's first step
    return control


def swap_pending(lane):
    """A committed compaction whose swap was cut after its first rename: the
    control file decides the file set (its old files left out, each new one
    read as .cmp while that exists)."""
    m = Model()
    control = swap_lane(lane, m)
    pending = {"generation": control.generation, "old": [list(p) for p in control.old],
               "new": [list(p) for p in control.new]}
    assert any(n.endswith(".cmp") for n in os.listdir(lane))
    return m, {"pending_swap": pending}


def control_damaged(lane):
    """A control file whose CRC does not match: the load fails naming it."""
    swap_lane(lane, Model())
    path = os.path.join(lane, CONTROL_FILE)
    raw = open(path, "rb").read()
    with open(path, "wb") as handle:
        handle.write(raw.replace(b'"generation": ', b'"generation": 7', 1))
    return None, {"fail": ("damaged", CONTROL_FILE, None)}


def control_newer(lane):
    """A control file of format 2 (its CRC right): refused as a newer format."""
    swap_lane(lane, Model())
    path = os.path.join(lane, CONTROL_FILE)
    data = json.loads(open(path, "rb").read())
    data.pop("crc32c")
    data["format"] = 2
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":")).encode()
    with open(path, "wb") as handle:
        handle.write(json.dumps({**data, "crc32c": codec_python.crc32c(canonical)},
                                sort_keys=True).encode())
    return None, {"fail": ("newer-format", CONTROL_FILE, None)}



def small_swap_lane(lane):
    """A small lane whose compaction is committed (control file written) but
    not swapped; returns the control file's fields, as a dict without crc32c."""
    from sparkjournal.maintenance.compactor import compact_lane
    m = Model()
    j, w = writer(lane, m, {"minFiles": 1})
    for i in range(1, 61):
        w.add(i, body(i, 400))
    for i in range(1, 61):
        if i % 3:
            w.delete(i)
    j.close()
    with Journal.read(lane):                         # a reader holds the swap off
        report = compact_lane(lane, force=True, swap_wait=0.01, **OPTIONS)
    assert report.compacted and report.swap_deferred, report
    data = json.loads(open(os.path.join(lane, CONTROL_FILE), "rb").read())
    data.pop("crc32c")
    return data


def control_crc(data: dict) -> int:
    """The CRC-32C of the canonical form of ``data`` (JSON.md)."""
    return codec_python.crc32c(json.dumps(data, sort_keys=True, separators=(",", ":")).encode())


def write_control_text(lane: str, text: str) -> None:
    with open(os.path.join(lane, CONTROL_FILE), "wb") as handle:
        handle.write(text.encode())


def control_fields(data: dict, crc: int, **replaced) -> str:
    """The control file's JSON text, ``replaced`` values written as given (raw JSON text)."""
    fields = {**{k: json.dumps(v) for k, v in data.items()}, "crc32c": str(crc), **replaced}
    return "{" + ", ".join(f'"{k}": {v}' for k, v in sorted(fields.items())) + "}"


def control_not_json(lane):
    """A control file cut in half (not JSON): damaged, the load fails naming it."""
    data = small_swap_lane(lane)
    text = control_fields(data, control_crc(data))
    write_control_text(lane, text[:len(text) // 2])
    return None, {"fail": ("damaged", CONTROL_FILE, None)}


def control_no_crc(lane):
    """A control file without crc32c, its other fields right: damaged."""
    data = small_swap_lane(lane)
    write_control_text(lane, json.dumps(data, sort_keys=True))
    return None, {"fail": ("damaged", CONTROL_FILE, None)}


def control_list(lane):
    """A control file holding a JSON list (of the right object): not an
    object, so damaged."""
    data = small_swap_lane(lane)
    write_control_text(lane, "[" + control_fields(data, control_crc(data)) + "]")
    return None, {"fail": ("damaged", CONTROL_FILE, None)}


def control_nan(lane):
    """A control file holding NaN (not JSON, JSON.md rule 2) in a field no
    CRC check reaches first (an extra name): damaged."""
    data = small_swap_lane(lane)
    write_control_text(lane, control_fields(data, control_crc(data), note="NaN"))
    return None, {"fail": ("damaged", CONTROL_FILE, None)}


def control_duplicate_name(lane):
    """A control file naming "generation" twice with the same value, its CRC
    right for that value: names once (JSON.md rule 3), so damaged."""
    data = small_swap_lane(lane)
    text = control_fields(data, control_crc(data))
    twice = f'"generation": {data["generation"]}'
    write_control_text(lane, text.replace(twice, twice + ", " + twice, 1))
    return None, {"fail": ("damaged", CONTROL_FILE, None)}


def control_absent_file(lane):
    """A control file whose fields and CRC are right, naming a new file of
    which neither <name>.cmp nor <name> exists: the load fails, damaged (the
    spec names no file for it: "file" is null)."""
    data = small_swap_lane(lane)
    name = sorted(n for n, _id in data["new"])[-1]
    for gone in (name + ".cmp", name):
        if os.path.exists(os.path.join(lane, gone)):
            os.unlink(os.path.join(lane, gone))
    return None, {"fail": ("damaged", None, None)}


def control_generation_string(lane):
    """A control file whose generation is a string of digits, its CRC right
    for the integer: typed fields (JSON.md rule 6), so damaged."""
    data = small_swap_lane(lane)
    write_control_text(lane, control_fields(data, control_crc(data),
                                            generation=json.dumps(str(data["generation"]))))
    return None, {"fail": ("damaged", CONTROL_FILE, None)}


def control_generation_float(lane):
    """A control file whose generation is written with a fraction (N.0), its
    CRC right for the integer N: typed fields (JSON.md rule 6), so damaged."""
    data = small_swap_lane(lane)
    write_control_text(lane, control_fields(data, control_crc(data),
                                            generation=f'{data["generation"]}.0'))
    return None, {"fail": ("damaged", CONTROL_FILE, None)}


def recovered(lane):
    """A sealed file damaged mid-file (a flipped body byte) that also holds a
    committed transaction: a load fails; in recovery mode the file is left out
    (a writer moves it to attic/, a reader leaves it in place) and the records
    and transactions lost with it are reported; the other files read as
    written."""
    m = Model()
    j, w = writer(lane, m)
    w.tx(1, [("add", 100, body(100, 200), 5), ("add", 101, body(101, 200), 5)])
    w.commit(1)
    for i in range(1, 31):
        w.add(i, body(i, 600))
    j.close()
    path, s = with_data(lane)[0]
    victim = s["records"][len(s["records"]) // 2]
    flip(path, victim[5] + layout.RECORD_HEADER_SIZE + 10)
    in_file = {r[3] for r in s["records"] if r[3]}
    for record_id in in_file:
        m.live.pop(record_id, None)
    # The damaged record's own id cannot be named (its CRC fails): the
    # records reported lost are the file's valid ones.
    lost = sorted(in_file - {victim[3]})
    name = os.path.basename(path)
    recovery = reading(m, lane)
    recovery.pop("outcome"), recovery.pop("scans")
    recovery["recoveries"] = [{"file": name, "offset": victim[5], "lost_record_ids": lost,
                               "lost_tx_ids": sorted({r[4] for r in s["records"] if r[4]})}]
    recovery["attic"] = ["attic/" + name]
    return None, {"fail": ("damaged", name, victim[5]), "recovery": recovery}


CASES = {
    "plain": plain, "transactions": transactions, "broken-count": broken_count,
    "reused": reused, "free-by-header": free_by_header, "torn-tail": torn_tail,
    "damaged-sealed": damaged_sealed, "skipped-headers": skipped_headers,
    "wrong-size": wrong_size, "newer-format": newer_format, "version-1": version_1,
    "large": large, "large-damaged": large_damaged, "swap-pending": swap_pending,
    "control-damaged": control_damaged, "control-newer": control_newer,
    "damage-past-window": damage_past_window, "torn-nothing": torn_nothing,
    "short-of-previous-end": short_of_previous_end, "compacted-damaged": compacted_damaged,
    "stale-own-id": stale_own_id, "control-not-json": control_not_json,
    "control-no-crc": control_no_crc, "control-list": control_list, "control-nan": control_nan,
    "control-duplicate-name": control_duplicate_name, "control-absent-file": control_absent_file,
    "control-generation-string": control_generation_string,
    "control-generation-float": control_generation_float, "recovered": recovered,
}


def write_case(name: str, make) -> None:
    folder = os.path.join(HERE, name)
    shutil.rmtree(folder, ignore_errors=True)
    lane = os.path.join(folder, "lane")
    os.makedirs(lane)
    model, extra = make(lane)
    if "fail" in extra:
        kind, file, offset = extra.pop("fail")
        expected = failing(lane, kind, file, offset, **extra)
    else:
        read_errors = extra.pop("read_errors", {})
        expected = reading(model, lane, **extra)
        for entry in expected["records"]:
            if entry["id"] in read_errors:
                entry.pop("size"), entry.pop("hex", None), entry.pop("sha256", None)
                entry["error"] = "damaged"
        if read_errors:
            files = sorted(read_errors.values())
            expected["outcome"] = "damaged"
            expected["error"] = {"kind": "damaged", "file": files[0], "offset": None, "at": "read",
                                 "files": files}
    check(lane, expected)
    for debris in ("journal.lock", "files.lock", "compact.lock"):      # made by the writer, the reader
        if os.path.exists(os.path.join(lane, debris)):
            os.unlink(os.path.join(lane, debris))
    for where, folders, files in os.walk(lane, topdown=False):     # git keeps no empty folder
        if where != lane and not folders and not files:
            os.rmdir(where)
    expected = {"case": name, "proves": " ".join(make.__doc__.split()), **expected}
    with open(os.path.join(folder, "expected.json"), "w", encoding="utf-8") as handle:
        handle.write(dumped(expected))


def dumped(expected: dict) -> str:
    """expected.json's text: one key a line, one list item a line."""
    lines = []
    for key, value in expected.items():
        if isinstance(value, list) and value:
            items = ",\n".join("  " + json.dumps(item) for item in value)
            lines.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(names) -> None:
    from pages_case import page_record_damaged, page_wrong_size, pages_case, pages_deleted
    cases = dict(CASES, pages=pages_case, **{"pages-deleted": pages_deleted,    # the events cases
                                             "page-record-damaged": page_record_damaged,
                                             "page-wrong-size": page_wrong_size})
    for name in names or cases:
        write_case(name, cases[name])
        print("wrote", name)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main(sys.argv[1:])
