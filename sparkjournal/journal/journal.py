"""A journal (one lane): the public API for appending and loading records.

``Journal.open(path)`` takes the lane's lock, loads it (see loader.py) and makes
it ready to append; ``Journal.read(path)`` loads a snapshot without a lock or any
change on disk, and may run while a writer appends. Record and tx ids are the
caller's 64-bit numbers (``next_record_id``/``next_tx_id`` hand out fresh ones).

Durability: a call with ``sync=True`` (the default per syncTransactional /
syncNonTransactional) returns only once its record is on disk. Non-transactional
records are visible on the next load once durable; transactional ones once their
COMMIT is. A prepared transaction survives a crash and comes back from the load
in ``prepared()``; an unprepared open one is rolled back when a writer opens.
"""
from __future__ import annotations

import logging
import os

from ..config import JournalConfig, load_config
from ..errors import SparkJournalError, TransactionError
from ..format import layout
from ..format.codec import CODEC
from ..io.files_io import overwrite_durably
from ..io.probe import choose_factory
from . import batch as batch_mod
from .appender import Appender
from .datafile import MappedFile
from .files import DataFile, DataFiles, first_write_offset
from .large import IpcBody, LargeStore
from .loader import LoadedJournal, load
from .lock import LaneLock
from .reclaim import reclaim
from .records import PreparedTransaction, Record
from .state import V_FILE, V_LARGE, V_LEN, V_OFFSET, V_USER_TYPE, JournalState

log = logging.getLogger("sparkjournal.journal")


class JournalSnapshot:
    """Live records of a lane as one load saw them; holds its files mapped."""

    def __init__(self, directory: str, config: JournalConfig, loaded: LoadedJournal):
        self.directory, self.config = directory, config
        self._state: JournalState = loaded.state
        self.report = loaded.report
        self._maps = {f.file_id: f.mapped for f in loaded.files}
        self._paths = {f.file_id: f.path for f in loaded.files}
        self.large = LargeStore(directory, create=False)

    def records(self):
        """Live committed records in the order they were first added."""
        for record_id, version in list(self._state.live.items()):
            file_id, offset, body_len, user_type, large_id = version
            yield Record(record_id, user_type, body_len, file_id, offset, bool(large_id), self._body)

    def __len__(self) -> int:
        return len(self._state.live)

    def get(self, record_id: int) -> Record | None:
        version = self._state.live.get(record_id)
        if version is None:
            return None
        file_id, offset, body_len, user_type, large_id = version
        return Record(record_id, user_type, body_len, file_id, offset, bool(large_id), self._body)

    def prepared(self) -> list[PreparedTransaction]:
        return [PreparedTransaction(t.tx_id, t.xid, [r[1] for r in t.records])
                for t in self._state.txs.values() if t.prepared]

    def prepared_records(self, tx_id: int) -> list[Record]:
        """The ADD/UPDATE records of a prepared transaction, as they will be live
        if it commits (the caller decides visibility; see PreparedTransaction)."""
        tx = self._state.txs.get(tx_id)
        if tx is None or not tx.prepared:
            return []
        return [Record(record_id, version[V_USER_TYPE], version[V_LEN], version[V_FILE],
                       version[V_OFFSET], bool(version[V_LARGE]), self._body)
                for _rtype, record_id, version, _file in tx.records if version is not None]

    def _map(self, file_id: int) -> MappedFile:
        mapped = self._maps.get(file_id)
        if mapped is None:
            mapped = self._maps[file_id] = MappedFile(self._paths[file_id])
        return mapped

    def _body(self, record: Record) -> memoryview:
        start = record.offset + layout.RECORD_HEADER_SIZE
        raw = self._map(record.file_id).view[start:start + record.body_len]
        if record.large:
            return self.large.read(raw, verify=self.config.checksum)
        return raw

    def close(self) -> None:
        for mapped in self._maps.values():
            mapped.close()
        self._maps.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Journal(JournalSnapshot):
    """The writer of one lane."""

    @classmethod
    def open(cls, path: str, config: JournalConfig | None = None, **options) -> "Journal":
        config = config.with_options(options) if config else load_config(options)
        if not os.path.isdir(path):
            if not config.createDirs:
                raise SparkJournalError(f"journal folder {path} does not exist and createDirs "
                                        f"is false; create it or set createDirs=true")
            os.makedirs(path, mode=0o750, exist_ok=True)
        lock = LaneLock(path)
        lock.acquire(wait=config.lockWait)
        try:
            return cls(path, config, lock)
        except BaseException:
            lock.release()
            raise

    @staticmethod
    def read(path: str, config: JournalConfig | None = None, **options) -> JournalSnapshot:
        """A lock-free snapshot: safe beside a running writer; changes nothing."""
        config = config.with_options(options) if config else load_config(options)
        if not os.path.isdir(path):
            raise SparkJournalError(f"no journal at {path}: the folder does not exist")
        loaded = load(path, verify_crc=config.checksum, writable=False, recover=config.recover)
        return JournalSnapshot(path, config, loaded)

    def __init__(self, path: str, config: JournalConfig, lock: LaneLock):
        self._lock_file = lock
        self.factory = choose_factory(path, config)
        self._appender = None
        try:
            loaded = load(path, verify_crc=config.checksum, writable=True, recover=config.recover)
            super().__init__(path, config, loaded)
            self.large = LargeStore(path, create=True)
            self._files, start, data_end = self._prepare_files(loaded)
            self._appender = Appender(self._files, self.factory, config, start, data_end,
                                      on_roll=self._reclaim)
            for tx_id in [t.tx_id for t in self._state.txs.values() if not t.prepared]:
                self.rollback(tx_id)
                self.report.rolled_back_tx_ids.append(tx_id)
            self.report.orphan_bodies_removed = self.large.remove_orphans(self._referenced_bodies())
            self._reclaim()
        except BaseException:
            # A failed open must not leak the flusher thread or the AIO context.
            try:
                if self._appender is not None:
                    self._appender.close()
            finally:
                self.factory.close()
            raise
        log.info("journal %s open: %s; I/O %s (%s)", path, self.report.summary(),
                 self.factory.kind, self.factory.reason)

    @property
    def backend(self) -> str:
        return self.factory.kind

    @property
    def backend_reason(self) -> str:
        return self.factory.reason

    def _prepare_files(self, loaded: LoadedJournal) -> tuple[DataFiles, int, int]:
        """Splits loaded files into written ones and the free pool; zeroes a torn
        tail so the dropped records cannot reappear past new data."""
        with_data = [i for i, f in enumerate(loaded.files) if f.n_data or f.torn_end]
        last = with_data[-1] if with_data else 0
        in_use = [DataFile(f.path, f.header) for f in loaded.files[:last + 1]]
        free = [DataFile(f.path, f.header) for f in loaded.files[last + 1:]]
        next_id = max((f.file_id for f in loaded.files), default=0) + 1
        files = DataFiles(self.directory, self.config, in_use, None, free, next_id)
        files.ensure_min_files()
        if not files.in_use:
            files.in_use.append(files.free.pop(0))
        files.current = files.in_use[-1]
        newest = loaded.files[last] if loaded.files and with_data else None
        data_end = newest.end if newest else layout.FILE_HEADER_SIZE
        start = first_write_offset(data_end, self.config.deviceBlockSize)
        if newest is not None and newest.torn_end > newest.end:
            # The dropped torn tail must not reappear past new data.
            overwrite_durably(newest.path, newest.end, bytes(newest.torn_end - newest.end))
        for data_file in files.in_use + files.free:
            self._paths[data_file.file_id] = data_file.path
        return files, start, data_end

    # --- non-transactional records -----------------------------------------------------
    def append_add(self, record_id: int, body, user_type: int = 0, sync: bool | None = None) -> None:
        self._append(layout.ADD, record_id, 0, body, user_type, sync, self.config.syncNonTransactional)

    def append_update(self, record_id: int, body, user_type: int = 0, sync: bool | None = None) -> None:
        self._append(layout.UPDATE, record_id, 0, body, user_type, sync, self.config.syncNonTransactional)

    def append_delete(self, record_id: int, sync: bool | None = None) -> None:
        self._append(layout.DELETE, record_id, 0, b"", 0, sync, self.config.syncNonTransactional)

    # --- transactions ------------------------------------------------------------------------
    def append_add_tx(self, tx_id: int, record_id: int, body, user_type: int = 0) -> None:
        self._append(layout.ADD_TX, record_id, tx_id, body, user_type, False, False)

    def append_update_tx(self, tx_id: int, record_id: int, body, user_type: int = 0) -> None:
        self._append(layout.UPDATE_TX, record_id, tx_id, body, user_type, False, False)

    def append_delete_tx(self, tx_id: int, record_id: int) -> None:
        self._append(layout.DELETE_TX, record_id, tx_id, b"", 0, False, False)

    def prepare(self, tx_id: int, xid: bytes = b"", sync: bool | None = None) -> None:
        self._append(layout.PREPARE, 0, tx_id, xid, 0, sync, self.config.syncTransactional)

    def commit(self, tx_id: int, sync: bool | None = None) -> None:
        self._append(layout.COMMIT, 0, tx_id, b"", 0, sync, self.config.syncTransactional)

    def rollback(self, tx_id: int, sync: bool | None = None) -> None:
        self._append(layout.ROLLBACK, 0, tx_id, b"", 0, sync, self.config.syncTransactional)

    def append_batch(self, bodies, *, first_record_id: int | None = None, user_type: int = 0,
                     tx_id: int = 0, sync: bool | None = None) -> range:
        """Appends many ADD (or ADD_TX) records in one call into C: ``bodies`` is a
        list of bytes, a pyarrow binary array, or Arrow record batches / a table
        (each batch one record, as Arrow IPC). Ids are consecutive, from
        ``first_record_id`` or fresh. Returns the ids."""
        default = self.config.syncTransactional if tx_id else self.config.syncNonTransactional
        return batch_mod.append_batch(self, bodies, first_record_id, user_type, tx_id,
                                      default if sync is None else sync)

    def next_record_id(self) -> int:
        with self._appender.lock:
            self._state.max_record_id += 1
            return self._state.max_record_id

    def next_tx_id(self) -> int:
        with self._appender.lock:
            self._state.max_tx_id += 1
            return self._state.max_tx_id

    def _append(self, rtype, record_id, tx_id, body, user_type, sync, default_sync) -> None:
        flags, large_id = 0, 0
        if layout.record_size(len(body)) > self.config.bufferSize or \
                (self.config.largeRecordSize and len(body) > self.config.largeRecordSize):
            if rtype not in (layout.ADD, layout.UPDATE, layout.ADD_TX, layout.UPDATE_TX):
                raise SparkJournalError(f"a {layout.TYPE_NAMES[rtype]} body of {len(body)} bytes "
                                        f"is larger than bufferSize ({self.config.bufferSize})")
            large_id, body = self.large.write(body)
            flags = layout.FLAG_LARGE
        elif isinstance(body, IpcBody):
            body = body.to_buffer()
        state = self._state

        def encode(buf, pos, file_id32):
            if rtype in (layout.UPDATE, layout.DELETE) and record_id not in state.live:
                raise SparkJournalError(f"record {record_id} is not live: nothing to "
                                        f"{layout.TYPE_NAMES[rtype].lower()}")
            if rtype in layout.TX_CONTROL_TYPES and tx_id not in state.txs:
                if rtype == layout.PREPARE:
                    state.tx(tx_id, create=True)
                else:
                    raise TransactionError(f"transaction {tx_id} is not open in this journal")
            count = state.count_in(tx_id, self._files.current.file_id) \
                if rtype in layout.TX_CONTROL_TYPES else 0
            return CODEC.encode_record(buf, pos, rtype, flags, user_type, file_id32,
                                       record_id, tx_id, count, body)

        def apply(file_id, offset):
            version = (file_id, offset, len(body), user_type, large_id)
            if rtype <= layout.UPDATE:
                state.put(record_id, version)
            elif rtype == layout.DELETE:
                state.delete(record_id, file_id)
            elif rtype <= layout.DELETE_TX:
                state.tx_record(tx_id, rtype, record_id, file_id,
                                None if rtype == layout.DELETE_TX else version)
            elif rtype == layout.PREPARE:
                state.prepare(tx_id, body, file_id)
            elif rtype == layout.COMMIT:
                state.commit(tx_id, file_id)
            else:
                state.rollback(tx_id, file_id)
            state.file(file_id).records += 1

        self._appender.append(layout.record_size(len(body)), encode, apply,
                              default_sync if sync is None else sync)

    # --- housekeeping --------------------------------------------------------------------------
    def _referenced_bodies(self) -> set:
        referenced = {v[V_LARGE] for v in self._state.live.values() if v[V_LARGE]}
        for tx in self._state.txs.values():
            referenced |= {r[2][V_LARGE] for r in tx.records if r[2] is not None and r[2][V_LARGE]}
        return referenced

    def _reclaim(self) -> None:
        reclaim(self._state, self._files, self.large, self._maps)

    def flush(self) -> None:
        """Makes everything appended so far durable."""
        self._appender.sync()

    def _body(self, record: Record) -> memoryview:
        # A record of the current file may still be in the write buffer or in
        # flight: the file holds zeros there until the write completes.
        if record.file_id == self._files.current.file_id:
            self._appender.sync()
        return super()._body(record)

    def _map(self, file_id: int) -> MappedFile:
        if file_id not in self._paths:
            for data_file in self._files.in_use:
                self._paths[data_file.file_id] = data_file.path
        return super()._map(file_id)

    @property
    def files(self) -> list[DataFile]:
        return list(self._files.in_use)

    @property
    def free_files(self) -> list[DataFile]:
        return list(self._files.free)

    def close(self) -> None:
        try:
            self._appender.close()
        finally:
            self.factory.close()
            super().close()
            self._lock_file.release()

