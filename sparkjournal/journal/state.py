"""The journal's logical state: live records, open transactions, and what every
data file still holds.

One state machine serves both sides: the loader replays scanned records into it,
the writer applies each record as it appends it (in log order, under the append
lock). So load and write agree on what is live by construction.

Reclaim accounting (Artemis's positive/negative rule, restated). For each file:
``pinned`` counts what in it is still needed (current versions of live records,
records and PREPAREs of open transactions); ``deps`` lists older files this
file's negating records point into: a DELETE points at every file holding a
version of the record it deletes, a COMMIT/ROLLBACK at every file holding the
transaction's records or PREPARE. A file is free when nothing in it is pinned and
every file in its deps is gone: deleting it then can never resurrect a deleted
record, a rolled-back or committed transaction.
"""
from __future__ import annotations

import dataclasses

from ..errors import TransactionError
from ..format import layout


# A record version is a plain tuple (the batch path creates millions of them):
# (file id, offset of the record in the file, body length, user type, large id);
# a non-zero large id means the body lives in large/<id>.body.
Version = tuple
V_FILE, V_OFFSET, V_LEN, V_USER_TYPE, V_LARGE = range(5)


@dataclasses.dataclass(slots=True)
class FileUsage:
    pinned: int = 0
    deps: set = dataclasses.field(default_factory=set)
    dead_large: list = dataclasses.field(default_factory=list)   # bodies to delete with the file
    records: int = 0      # records appended into the file, for inspect and live ratios


@dataclasses.dataclass
class OpenTransaction:
    tx_id: int
    # (type, record_id, version, file id) in append order; version None for deletes
    records: list = dataclasses.field(default_factory=list)
    per_file: dict = dataclasses.field(default_factory=dict)     # file id -> tx records in it
    prepared: bool = False
    xid: bytes = b""
    prepare_file: int | None = None

    def files(self) -> set:
        held = set(self.per_file)
        if self.prepare_file is not None:
            held.add(self.prepare_file)
        return held


class JournalState:
    def __init__(self) -> None:
        self.live: dict[int, Version] = {}          # insertion order: first seen
        self.older: dict[int, set] = {}             # record id -> files holding superseded versions
        self.txs: dict[int, OpenTransaction] = {}
        self.usage: dict[int, FileUsage] = {}
        self.max_record_id = 0
        self.max_tx_id = 0
        self.broken_tx_ids: list[int] = []          # load: COMMITs whose count did not match

    def replace_with(self, other: "JournalState") -> None:
        """Takes ``other``'s contents in place: code holding this object (an
        append in progress) sees the new state. A writer's reload after a
        compaction swap moved records to other files and offsets."""
        vars(self).update(vars(other))

    # --- plain records ------------------------------------------------------------
    def file(self, file_id: int) -> FileUsage:
        usage = self.usage.get(file_id)
        if usage is None:
            usage = self.usage[file_id] = FileUsage()
        return usage

    def put(self, record_id: int, version: Version) -> None:
        """ADD or UPDATE: ``version`` becomes the record's body."""
        old = self.live.get(record_id)
        if old is not None:
            self._retire(record_id, old)
        self.live[record_id] = version
        self.file(version[V_FILE]).pinned += 1
        if record_id > self.max_record_id:
            self.max_record_id = record_id

    def put_new(self, first_id: int, versions: list, file_id: int) -> None:
        """ADDs of ids ``first_id..`` above every id seen so far, all in one file:
        the batch path, with no per-record Python work."""
        assert first_id > self.max_record_id
        self.live.update(zip(range(first_id, first_id + len(versions)), versions))
        self.file(file_id).pinned += len(versions)
        self.max_record_id = first_id + len(versions) - 1

    def delete(self, record_id: int, delete_file: int) -> bool:
        """DELETE written in ``delete_file``; False when the record is not live."""
        old = self.live.pop(record_id, None)
        if old is None:
            return False
        self._retire(record_id, old)
        holders = self.older.pop(record_id, set())
        holders.discard(delete_file)
        self.file(delete_file).deps |= holders
        return True

    def _retire(self, record_id: int, old: Version) -> None:
        usage = self.file(old[V_FILE])
        usage.pinned -= 1
        if old[V_LARGE]:
            usage.dead_large.append(old[V_LARGE])
        self.older.setdefault(record_id, set()).add(old[V_FILE])

    # --- transactions -------------------------------------------------------------
    def tx(self, tx_id: int, create: bool) -> OpenTransaction:
        tx = self.txs.get(tx_id)
        if tx is None:
            if not create:
                raise TransactionError(f"transaction {tx_id} is not open in this journal")
            tx = self.txs[tx_id] = OpenTransaction(tx_id)
            if tx_id > self.max_tx_id:
                self.max_tx_id = tx_id
        return tx

    def tx_record(self, tx_id: int, rtype: int, record_id: int, file_id: int,
                  version: Version | None) -> None:
        tx = self.tx(tx_id, create=True)
        if tx.prepared:
            raise TransactionError(f"transaction {tx_id} is prepared: it takes no more records")
        tx.records.append((rtype, record_id, version, file_id))
        tx.per_file[file_id] = tx.per_file.get(file_id, 0) + 1
        self.file(file_id).pinned += 1
        if record_id > self.max_record_id:
            self.max_record_id = record_id

    def prepare(self, tx_id: int, xid: bytes, file_id: int) -> None:
        tx = self.tx(tx_id, create=True)
        if tx.prepared:
            raise TransactionError(f"transaction {tx_id} is already prepared")
        tx.prepared, tx.xid, tx.prepare_file = True, bytes(xid), file_id
        self.file(file_id).pinned += 1

    def count_in(self, tx_id: int, file_id: int) -> int:
        """Artemis's per-file count: the tx's records in ``file_id``."""
        tx = self.txs.get(tx_id)
        return tx.per_file.get(file_id, 0) if tx else 0

    def commit(self, tx_id: int, commit_file: int) -> OpenTransaction:
        tx = self._end(tx_id, commit_file)
        for rtype, record_id, version, file_id in tx.records:
            if layout.PLAIN_TYPE[rtype] == layout.DELETE:
                # The negation lives in the DELETE_TX's file: it must outlive the
                # deleted versions, and the COMMIT's file outlives it (deps above).
                self.delete(record_id, file_id)
            else:
                self.put(record_id, version)
        return tx

    def rollback(self, tx_id: int, end_file: int) -> OpenTransaction:
        tx = self._end(tx_id, end_file)
        for _rtype, _record_id, version, _file_id in tx.records:
            if version is not None and version[V_LARGE]:
                self.file(version[V_FILE]).dead_large.append(version[V_LARGE])
        return tx

    def _end(self, tx_id: int, end_file: int) -> OpenTransaction:
        tx = self.txs.pop(tx_id, None)
        if tx is None:
            raise TransactionError(f"transaction {tx_id} is not open in this journal")
        for file_id, count in tx.per_file.items():
            self.file(file_id).pinned -= count
        if tx.prepare_file is not None:
            self.file(tx.prepare_file).pinned -= 1
        self.file(end_file).deps |= tx.files() - {end_file}
        return tx

    # --- reclaim ------------------------------------------------------------------------
    def free_files(self, file_ids_in_order: list[int], keep: set) -> list[int]:
        """Files (oldest first) that can go, given every file that exists now in
        id order; files in ``keep`` (the one being written) never go."""
        existing = set(file_ids_in_order)
        free = []
        for file_id in file_ids_in_order:
            usage = self.usage.get(file_id)
            if file_id in keep:
                continue
            if usage is None or (usage.pinned == 0 and not (usage.deps & existing)):
                free.append(file_id)
                existing.discard(file_id)
        return free

    def forget_file(self, file_id: int) -> list[int]:
        """The file is gone; returns the large bodies that died with it."""
        usage = self.usage.pop(file_id, None)
        return usage.dead_large if usage else []
