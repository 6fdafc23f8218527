"""A journal (one lane): the public API for appending and loading records.

``Journal.open(path)`` takes the lane's lock, loads it (see loader.py) and makes
it ready to append; ``Journal.read(path)`` loads a snapshot without the writer's
lock or any change on disk, and may run while a writer appends and while a
compaction rewrites the lane: it holds the lane's file-set lock shared until it
is closed, so the files it mapped are not reused or swapped away under it
(fileset.py). Record and tx ids are the
caller's 64-bit numbers (``next_record_id``/``next_tx_id`` hand out fresh ones).

Compaction runs in another process while the writer appends (maintenance/
compactor.py); its swap replaces older files. The writer notices at its next
reclaim (or ``refresh()``) and reloads its state in place before it frees any
file, so it never acts on file ids or offsets that a swap made stale.

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
from ..io.files_io import overwrite_durably, sync_file
from ..io.modes import make_dirs, use_config_modes
from ..io.probe import choose_factory
from . import batch as batch_mod
from .appender import Appender
from .datafile import MappedFile
from .deferred_crc import DeferredChecks
from .fileset import hold_for_reading, maintenance_running, read_generation, try_hold_exclusive
from .files import DataFile, DataFiles, crash_reach, first_write_offset
from .inside import check_inside
from .large import IpcBody, LargeStore
from .loader import LoadedJournal, load
from .lock import LaneLock
from .reclaim import reclaim
from .records import PreparedTransaction, Record
from .state import V_FILE, V_LARGE, V_LEN, V_OFFSET, V_USER_TYPE, JournalState
from .swap import finish_swap, read_control

log = logging.getLogger("sparkjournal.journal")


def file_set_generation(directory: str, loaded: LoadedJournal | None = None) -> tuple[int, bool]:
    """(swap generation, whether that swap is still pending) of the lane's
    file set, as ``loaded`` saw it or as it is on disk now."""
    control = loaded.pending_swap if loaded is not None else read_control(directory)
    if control is not None:
        return control.generation, True
    return read_generation(directory), False


def body_in_place(buf, pos: int, body) -> memoryview:
    """Puts ``body`` where a record at ``pos`` of ``buf`` holds it, right after
    its header (an Arrow batch, IpcBody, is serialized there, once); returns
    the view of it there, for encoding the header in place."""
    start = pos + layout.RECORD_HEADER_SIZE
    in_place = memoryview(buf)[start:start + len(body)]
    if isinstance(body, IpcBody):
        body.fill(in_place)
    else:
        in_place[:] = memoryview(body).cast("B")
    return in_place


class JournalSnapshot:
    """Live records of a lane as one load saw them; holds its files mapped."""

    def __init__(self, directory: str, config: JournalConfig, loaded: LoadedJournal):
        self.directory, self.config = directory, config
        self._generation = file_set_generation(directory, loaded)
        self._state: JournalState = loaded.state
        self.report = loaded.report
        self._maps = {f.file_id: f.mapped for f in loaded.files}
        self._paths = {f.file_id: f.path for f in loaded.files}
        # None unless the load deferred checks: reading a body then costs nothing more
        self._deferred = (DeferredChecks(loaded.files, self._paths) if loaded.report.crc_deferred
                          else None)
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

    def open_transactions(self) -> dict[int, list[int]]:
        """{tx id: its record ids} of transactions with records on disk but no
        PREPARE, COMMIT or ROLLBACK yet: still being written, or left by a
        writer that died (the lane's next writer rolls them back)."""
        return {t.tx_id: [r[1] for r in t.records] for t in self._state.txs.values()
                if not t.prepared}

    @property
    def max_record_id(self) -> int:
        """The highest record id the lane ever handed out, as this load saw it:
        in any record, live or not, or in a file header's id watermark."""
        return self._state.max_record_id

    def _map(self, file_id: int) -> MappedFile:
        mapped = self._maps.get(file_id)
        if mapped is None:
            mapped = self._maps[file_id] = MappedFile(self._paths[file_id])
        return mapped

    def check_deferred(self) -> int:
        """Checks every record whose CRC check the load deferred and no read
        did yet (deferred_crc.py); a reader calls it once it has read all it
        yields. Raises CorruptJournalError; returns how many it checked."""
        if self._deferred is None:
            return 0
        return self._deferred.check_rest(lambda file_id: self._map(file_id).view)

    def _body(self, record: Record) -> memoryview:
        start = record.offset + layout.RECORD_HEADER_SIZE
        view = self._map(record.file_id).view
        if self._deferred is not None:
            self._deferred.check(record.file_id, record.offset, view)
        raw = view[start:start + record.body_len]
        if record.large:
            return self.large.read(raw, verify=self.config.checksum)
        return raw

    def close(self) -> None:
        for mapped in self._maps.values():
            mapped.close()
        self._maps.clear()
        hold = getattr(self, "_read_hold", None)
        if hold is not None:
            hold.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Journal(JournalSnapshot):
    """The writer of one lane."""

    @classmethod
    def open(cls, path: str, config: JournalConfig | None = None, **options) -> "Journal":
        config = config.with_options(options) if config else load_config(options)
        use_config_modes(path, config)
        if not os.path.isdir(path):
            if not config.createDirs:
                raise SparkJournalError(f"journal folder {path} does not exist and createDirs "
                                        f"is false; create it or set createDirs=true")
            make_dirs(path)
        lock = LaneLock(path)
        lock.acquire(wait=config.lockWait)
        try:
            return cls(path, config, lock)
        except BaseException:
            lock.release()
            raise

    @staticmethod
    def read(path: str, config: JournalConfig | None = None, *, defer_crc: bool = False,
             **options) -> JournalSnapshot:
        """A lock-free snapshot: safe beside a running writer; changes nothing.
        ``defer_crc``: big records of sealed files are CRC-checked when their
        body is read, the rest by ``check_deferred`` (deferred_crc.py)."""
        config = config.with_options(options) if config else load_config(options)
        use_config_modes(path, config)
        if not os.path.isdir(path):
            raise SparkJournalError(f"no journal at {path}: the folder does not exist")
        hold = hold_for_reading(path)
        try:
            loaded = load(path, verify_crc=config.checksum, writable=False, recover=config.recover,
                          defer_crc=defer_crc)
            snapshot = JournalSnapshot(path, config, loaded)
        except BaseException:
            hold.release()
            raise
        snapshot._read_hold = hold
        return snapshot

    def __init__(self, path: str, config: JournalConfig, lock: LaneLock):
        self._lock_file = lock
        use_config_modes(path, config)
        if config.archive:          # refused at open, not at the first reclaim mid-write
            check_inside(path, config.archiveDirectory, "archiveDirectory")
        self.factory = choose_factory(path, config)
        self._appender = None
        try:
            with hold_for_reading(path):        # no swap or reclaim while it lists and maps
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
            # A failed open must not leak the flusher thread, the AIO context, or
            # a data file being created in the background.
            try:
                if self._appender is not None:
                    self._appender.close()
            finally:
                self._close_files()
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
        """Splits loaded files into written ones and the free pool; zeroes what
        lies past the end of data up to where appends begin (module below)."""
        with_data = [i for i, f in enumerate(loaded.files) if f.n_data or f.torn_end]
        last = with_data[-1] if with_data else 0
        in_use = [DataFile(f.path, f.header) for f in loaded.files[:last + 1]]
        free = [DataFile(f.path, f.header) for f in loaded.files[last + 1:]]
        next_id = max((f.file_id for f in loaded.files), default=0) + 1
        files = DataFiles(self.directory, self.config, in_use, None, free, next_id)
        state = self._state
        files.watermark = lambda: (state.max_record_id, state.max_tx_id)
        files.ensure_min_files()
        if not files.in_use:
            files.in_use.append(files.free.pop(0))
        files.current = files.in_use[-1]
        newest = loaded.files[last] if loaded.files and with_data else None
        data_end = newest.end if newest else layout.FILE_HEADER_SIZE
        start = first_write_offset(data_end, self.config.deviceBlockSize)
        if newest is not None:
            # What a crashed writer may have left past the end of data, torn (a
            # dropped torn tail, a torn record of this file's own id, any
            # blocks of an unsynced multi-block write), lies within the header's
            # sync window of it (crash_reach). Left there, such bytes would end
            # the data again before the new records (a later load drops those
            # as a torn tail) or, once a roll seals this file, fail the load as
            # damage. So they are zeroed before anything is appended, and the
            # file is synced either way: a killed writer's unsynced records,
            # which this load took for data, are durable before a roll's
            # header can name where this file's data ends.
            zero_to = crash_reach(newest, start, self.config.deviceBlockSize)
            if newest.mapped.view[newest.end:zero_to].tobytes().strip(b"\0"):
                overwrite_durably(newest.path, newest.end, bytes(zero_to - newest.end))
            else:
                sync_file(newest.path)
        if files.current.header.sealed_end or \
                files.current.header.sync_window < self.config.sync_window:
            # Written whole by compaction: never appended to. Or its header
            # promises a smaller sync window than this writer keeps: a crash
            # tail past that window would load as damage, not as a torn tail.
            # Roll into a fresh file now (header durable before the first
            # append lands in it), as the JVM appender does (AppendStart).
            data_file, header = files.roll(data_end)
            overwrite_durably(data_file.path, 0, header)
            start = data_end = layout.FILE_HEADER_SIZE
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
        flags, large_id, alone = 0, 0, False
        size = layout.record_size(len(body))
        if (size > self.config.bufferSize or self.config.largeRecordSize) and \
                batch_mod.goes_to_large_store(self.config, len(body)):
            if rtype not in (layout.ADD, layout.UPDATE, layout.ADD_TX, layout.UPDATE_TX):
                raise SparkJournalError(f"a {layout.TYPE_NAMES[rtype]} body of {len(body)} bytes "
                                        f"does not fit a data file (fileSize {self.config.fileSize})")
            large_id, body = self.large.write(body)
            flags, size = layout.FLAG_LARGE, layout.record_size(len(body))
        elif size > self.config.bufferSize:
            alone = True                   # written alone into the data file (Appender.append_alone)
        state = self._state

        def checked_count() -> int:
            """Raises if the record cannot be appended now; its per-file tx count."""
            if rtype in (layout.UPDATE, layout.DELETE) and record_id not in state.live:
                raise SparkJournalError(f"record {record_id} is not live: nothing to "
                                        f"{layout.TYPE_NAMES[rtype].lower()}")
            if rtype in layout.TX_CONTROL_TYPES and tx_id not in state.txs:
                if rtype == layout.PREPARE:
                    state.tx(tx_id, create=True)
                else:
                    raise TransactionError(f"transaction {tx_id} is not open in this journal")
            return state.count_in(tx_id, self._files.current.file_id) \
                if rtype in layout.TX_CONTROL_TYPES else 0

        def header(buf, pos, file_id32, count, placed_body):
            return CODEC.encode_record(buf, pos, rtype, flags, user_type, file_id32,
                                       record_id, tx_id, count, placed_body)

        def encode(buf, pos, file_id32):
            count = checked_count()
            return header(buf, pos, file_id32, count,
                          body_in_place(buf, pos, body) if isinstance(body, IpcBody) else body)

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

        if alone:
            body_len = len(body)

            def encode_alone(view, file_id32):
                # The header and CRC follow in seal, which the backend may
                # overlap with writing the body.
                count = checked_count()
                in_place = body_in_place(view, 0, body)
                body_end = layout.RECORD_HEADER_SIZE + body_len
                view[body_end:] = bytes(len(view) - body_end)
                return layout.record_size(body_len), \
                    lambda: header(view, 0, file_id32, count, in_place)

            self._appender.append_alone(size, encode_alone, apply)
            return
        self._appender.append(size, encode, apply, default_sync if sync is None else sync)

    # --- housekeeping --------------------------------------------------------------------------
    def _referenced_bodies(self) -> set:
        referenced = {v[V_LARGE] for v in self._state.live.values() if v[V_LARGE]}
        for tx in self._state.txs.values():
            referenced |= {r[2][V_LARGE] for r in tx.records if r[2] is not None and r[2][V_LARGE]}
        return referenced

    def _reclaim(self) -> None:
        """Frees dead files (reclaim.py); called at open and at every roll, with
        the append lock held and nothing unwritten. Only under the exclusive
        file-set lock, never while a maintenance process runs on the lane (its
        plan stands on these files), and never on a state a compaction swap made
        stale: then the swap is finished if its compactor died, and the state
        is reloaded first. A lane being read just reclaims at a later roll."""
        held = try_hold_exclusive(self.directory)
        if held is None:
            return
        with held:
            if maintenance_running(self.directory):
                return
            control = read_control(self.directory)
            if control is not None:
                finish_swap(self.directory, control, self._archive_dir())
            # Without a control file the file set's generation is files.gen alone.
            if control is not None or (read_generation(self.directory), False) != self._generation:
                self._reload()
            reclaim(self._state, self._files, self.large, self._maps)

    def _archive_dir(self) -> str | None:
        if not self.config.archive:
            return None
        return check_inside(self.directory, self.config.archiveDirectory, "archiveDirectory")

    def _reload(self) -> None:
        """Replaces the loaded state with what the lane's files hold now (after a
        compaction swap moved records), in place, keeping the writer's current
        file, its free pool and the ids it handed out. Call with the append lock
        held, nothing unwritten, and the file-set lock held (shared suffices:
        no swap can run during the load)."""
        loaded = load(self.directory, verify_crc=self.config.checksum, writable=False)
        current = self._files.current
        free_ids = {f.file_id for f in self._files.free}
        in_use = [DataFile(f.path, f.header) for f in loaded.files
                  if f.file_id not in free_ids and f.file_id <= current.file_id]
        if not in_use or in_use[-1].file_id != current.file_id:
            raise SparkJournalError(f"journal {self.directory}: after a compaction swap the "
                                    f"file being written (id {current.file_id}) is missing")
        in_use[-1] = current
        self._files.in_use[:] = in_use
        loaded.state.max_record_id = max(loaded.state.max_record_id, self._state.max_record_id)
        loaded.state.max_tx_id = max(loaded.state.max_tx_id, self._state.max_tx_id)
        self._state.replace_with(loaded.state)
        for mapped in self._maps.values():
            mapped.close()
        self._maps = {f.file_id: f.mapped for f in loaded.files}
        self._paths = {f.file_id: f.path for f in loaded.files}
        for data_file in self._files.in_use + self._files.free:
            self._paths[data_file.file_id] = data_file.path
        self._generation = file_set_generation(self.directory, loaded)
        log.info("journal %s reloaded after compaction swap %d: %s", self.directory,
                 self._generation[0], loaded.report.summary())

    def refresh(self) -> bool:
        """Reloads the writer's state if a compaction swapped files since it last
        looked (and reclaims); True if it did. Cheap when nothing changed: a
        lane writer calls it before each task."""
        if file_set_generation(self.directory) == self._generation:
            return False

        def reload_if_swapped():
            with hold_for_reading(self.directory):    # a swap in progress finishes first
                if file_set_generation(self.directory) != self._generation:
                    self._reload()
        self._appender.run_quiesced(reload_if_swapped)
        return True

    def reclaim_now(self) -> None:
        """Frees the files whose records are all dead now, as a roll would (a
        writer that waits for space appends nothing, so it never rolls). What
        was appended before is synced first, so no file is freed on the strength
        of a DELETE a crash could still lose (call it from the one thread that
        appends)."""
        self.flush()
        self._appender.run_quiesced(self._reclaim)

    def flush(self) -> None:
        """Makes everything appended so far durable."""
        self._appender.sync()

    def records(self):
        # A whole scan picks up a compaction's swap first; per-record lookups
        # (get, prepared_records) do not pay the file-set check each: their
        # callers refresh once before a unit of work (a task, carry_out).
        self.refresh()
        return super().records()

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

    def _close_files(self) -> None:
        """Waits for a data file being created in the background: the lane lock
        is never released with a file half made (next_file.py)."""
        files = getattr(self, "_files", None)
        if files is not None:
            files.close()

    def close(self) -> None:
        try:
            self._appender.close()
        finally:
            self._close_files()
            self.factory.close()
            super().close()
            self._lock_file.release()

