"""``sparkjournal export`` / ``sparkjournal import``: a journal as JSON lines.

The format (version 1), one JSON object per line, UTF-8:
  {"format": "sparkjournal-export", "version": 1, "lanes": ["lane-000", ...]}   first line
  {"kind": "record", "lane": L, "record_id": N, "user_type": T, "body": BASE64}
  {"kind": "prepared", "lane": L, "tx_id": N, "xid": BASE64,
   "records": [{"op": "add"|"update"|"delete", "record_id": N, "user_type": T, "body": BASE64}]}
Records come in each lane's first-added order, then that lane's prepared
transactions. Import is plain JSON and base64 decoding: nothing is unpickled or
evaluated, and every field is checked before it is used.

Export reads lock-free snapshots (safe beside a writer). Import writes into
empty lanes only, checked for every lane before anything is written; records
are appended without a sync each and the lane is flushed (made durable) before
it is closed, so a crash mid-import leaves a prefix of the export, never a
half-written record. Lane names that are not ``lane-NNN`` are mapped to the next
free ``lane-NNN`` of the target root (a name from the file never becomes a path).
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import sys

from ..errors import SparkJournalError, UsageError
from ..format import layout
from ..journal.journal import Journal
from ..journal.records import Record
from ..journal.lanes import LANE, lane_name
from .paths import find_lanes, is_lane_folder, root_lanes

FORMAT = "sparkjournal-export"
VERSION = 1
OPS = {layout.ADD_TX: "add", layout.UPDATE_TX: "update", layout.DELETE_TX: "delete"}
MAX_U64, MAX_U16 = (1 << 64) - 1, (1 << 16) - 1
BATCH_RECORDS = 4096            # consecutive small records appended in one batch call


def _b64(view) -> str:
    return base64.b64encode(view).decode("ascii")


def export_lane(name: str, snapshot, out) -> tuple[int, int]:
    """Writes one lane's lines; returns (records, prepared transactions)."""
    records = 0
    for record in snapshot.records():
        body = record.body
        out.write(json.dumps({"kind": "record", "lane": name, "record_id": record.record_id,
                              "user_type": record.user_type, "body": _b64(body)}) + "\n")
        body.release()
        records += 1
    prepared = [tx for tx in snapshot._state.txs.values() if tx.prepared]
    for tx in prepared:
        items = []
        for rtype, record_id, version, file_id in tx.records:
            item = {"op": OPS[rtype], "record_id": record_id, "user_type": 0, "body": ""}
            if version is not None:
                record = Record(record_id, version[3], version[2], version[0], version[1],
                                bool(version[4]), snapshot._body)
                body = record.body
                item.update(user_type=version[3], body=_b64(body))
                body.release()
            items.append(item)
        out.write(json.dumps({"kind": "prepared", "lane": name, "tx_id": tx.tx_id,
                              "xid": _b64(tx.xid), "records": items}) + "\n")
    return records, len(prepared)


def run_export(args) -> int:
    lanes = find_lanes(args.path)
    to_stdout = args.output == "-"
    target = args.output + ".tmp"
    out = sys.stdout if to_stdout else open(target, "w", encoding="utf-8")
    try:
        out.write(json.dumps({"format": FORMAT, "version": VERSION,
                              "lanes": [name for name, _ in lanes]}) + "\n")
        for name, lane_dir in lanes:
            with Journal.read(lane_dir) as snapshot:
                records, prepared = export_lane(name, snapshot, out)
            print(f"export: {name}: {records} records, {prepared} prepared transactions", file=sys.stderr)
        if not to_stdout:
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        if not to_stdout:
            out.close()
            os.unlink(target)
        raise
    if not to_stdout:
        out.close()
        os.replace(target, args.output)
    return 0


# --- import ----------------------------------------------------------------------------------
class _LaneWriter:
    """Appends one lane's lines, grouping consecutive small records into batch calls."""

    def __init__(self, journal: Journal):
        self.journal = journal
        self.pending: list = []
        self.pending_first = self.user_type = 0
        self.records = self.prepared = 0

    def record(self, record_id: int, user_type: int, body: bytes, where: str) -> None:
        end = self.pending_first + len(self.pending)
        if record_id in self.journal._state.live or self.pending_first <= record_id < end:
            raise SparkJournalError(f"{where}: record id {record_id} appears twice")
        small = layout.record_size(len(body)) <= self.journal.config.bufferSize // 2
        if self.pending and (record_id != end or user_type != self.user_type or not small
                             or len(self.pending) >= BATCH_RECORDS):
            self.flush_pending()
        if small:
            if not self.pending:
                self.pending_first, self.user_type = record_id, user_type
            self.pending.append(body)
        else:
            self.journal.append_add(record_id, body, user_type, sync=False)
        self.records += 1

    def flush_pending(self) -> None:
        if self.pending:
            self.journal.append_batch(self.pending, first_record_id=self.pending_first,
                                      user_type=self.user_type, sync=False)
            self.pending = []

    def prepared_tx(self, tx_id: int, xid: bytes, items: list) -> None:
        self.flush_pending()
        for op, record_id, user_type, body in items:
            if op == "add":
                self.journal.append_add_tx(tx_id, record_id, body, user_type)
            elif op == "update":
                self.journal.append_update_tx(tx_id, record_id, body, user_type)
            else:
                self.journal.append_delete_tx(tx_id, record_id)
        self.journal.prepare(tx_id, xid, sync=False)
        self.prepared += 1


def _field(line: dict, key: str, kind, where: str, maximum: int | None = None):
    value = line.get(key)
    if not isinstance(value, kind) or isinstance(value, bool) or \
            (maximum is not None and not 0 <= value <= maximum):
        raise SparkJournalError(f"{where}: field {key!r} is missing or not valid ({value!r})")
    return value


def _bytes(line: dict, key: str, where: str) -> bytes:
    try:
        return base64.b64decode(_field(line, key, str, where), validate=True)
    except binascii.Error:
        raise SparkJournalError(f"{where}: field {key!r} is not base64") from None


def _targets(path: str, lanes: list) -> dict:
    """{exported lane name: target lane folder}; every target must be empty."""
    if os.path.isdir(path) and is_lane_folder(path) and not root_lanes(path):
        if len(lanes) != 1:
            raise UsageError(f"{path} is one lane, but the export holds {len(lanes)} lanes: "
                             f"import into a journal root instead")
        targets = {lanes[0]: path}
    else:
        taken = {os.path.basename(p) for p in root_lanes(path)} | {n for n in lanes if LANE.match(n)}
        targets, number = {}, 0
        for name in lanes:
            if not LANE.match(name):
                while lane_name(number) in taken:
                    number += 1
                taken.add(lane_name(number))
                print(f"import: lane {name!r} becomes {lane_name(number)}", file=sys.stderr)
                name, original = lane_name(number), name
                targets[original] = os.path.join(path, name)
            else:
                targets[name] = os.path.join(path, name)
    for target in targets.values():
        if os.path.isdir(target) and is_lane_folder(target):
            with Journal.read(target) as existing:
                if len(existing) or existing.prepared():
                    raise SparkJournalError(f"{target} already holds {len(existing)} live records: "
                                            f"import only into empty lanes (nothing was written)")
    return targets


def _read_header(handle, source: str) -> list:
    first = handle.readline()
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise UsageError(f"{source} is not a sparkjournal export (its first line is not the "
                         f"export header written by `sparkjournal export`)")
    if header.get("version") != VERSION:
        raise SparkJournalError(f"{source} is export format version {header.get('version')!r}; "
                                f"this sparkjournal reads version {VERSION}")
    lanes = header.get("lanes")
    if not isinstance(lanes, list) or not all(isinstance(n, str) and n for n in lanes) \
            or len(set(lanes)) != len(lanes):
        raise SparkJournalError(f"{source} line 1: 'lanes' must list distinct lane names")
    return lanes


def run_import(args) -> int:
    if args.file != "-" and not os.path.isfile(args.file):
        raise UsageError(f"{args.file} does not exist or is not a file")
    handle = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")
    writers: dict[str, _LaneWriter] = {}
    try:
        lanes = _read_header(handle, args.file)
        targets = _targets(args.path, lanes)
        for number, text in enumerate(handle, 2):
            if not text.strip():
                continue
            where = f"{args.file} line {number}"
            try:
                line = json.loads(text)
            except ValueError as error:
                raise SparkJournalError(f"{where}: not JSON ({error})") from None
            if not isinstance(line, dict) or line.get("lane") not in targets:
                raise SparkJournalError(f"{where}: no 'lane' named in the header")
            writer = writers.get(line["lane"])
            if writer is None:
                writer = writers[line["lane"]] = _LaneWriter(Journal.open(targets[line["lane"]]))
            if line.get("kind") == "record":
                writer.record(_field(line, "record_id", int, where, MAX_U64),
                              _field(line, "user_type", int, where, MAX_U16),
                              _bytes(line, "body", where), where)
            elif line.get("kind") == "prepared":
                items = []
                for item in _field(line, "records", list, where):
                    if not isinstance(item, dict) or item.get("op") not in ("add", "update", "delete"):
                        raise SparkJournalError(f"{where}: a prepared record needs op add, update or delete")
                    items.append((item["op"], _field(item, "record_id", int, where, MAX_U64),
                                  _field(item, "user_type", int, where, MAX_U16), _bytes(item, "body", where)))
                tx_id = _field(line, "tx_id", int, where, MAX_U64)
                if tx_id == 0:
                    raise SparkJournalError(f"{where}: tx_id 0 is not a transaction")
                writer.prepared_tx(tx_id, _bytes(line, "xid", where), items)
            else:
                raise SparkJournalError(f"{where}: 'kind' must be record or prepared")
        for name, writer in writers.items():
            writer.flush_pending()
            writer.journal.flush()
            print(f"import: {name} -> {targets[name]}: {writer.records} records, "
                  f"{writer.prepared} prepared transactions", file=sys.stderr)
    finally:
        for writer in writers.values():
            writer.journal.close()
        if handle is not sys.stdin:
            handle.close()
    return 0
