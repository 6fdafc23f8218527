"""The commit log: the driver's durable decision for every batch it committed.

Layout, under the log's base URI (a local path, ``hdfs://...``, ``s3://...``;
reached through ``pyarrow.fs``), defined in format/COMMIT_LOG.md::

    <base>/<query>/<batch id, 20 digits>.json    one Decision per decided batch (epoch 0)
    <base>/<query>/<batch id>.<epoch>.json       a later epoch's, after an abort entry
    <base>/schema.arrow                          the journal's Arrow schema (IPC)
    <base>/LOG_ID                                a random id, made by the first writer
    <base>/_checkpoints/, <base>/_times/         checkpoints of the live state and the
                                                 commit times of the batches they fold
                                                 (log_checkpoint.py, commit_times.py)

Entries a checkpoint covers are deleted by retention
(maintenance/log_checkpointer.py); everything a reader asks of a batch then
comes from the checkpoint and the commit times (log_view.py, log_state.py).

LOG_ID lets a task tell that the log it reaches at the log's URI is the very
log its driver writes: a local path (the default ``<root>/_commits``) names a
different folder on every host of a cluster, and decisions the tasks and
readers there cannot see would leave every batch invisible. The sink's tasks
refuse to write when the ids differ (lane_writer.py).

A Decision names exactly the transactions, as (node id, lane, tx id), whose
PREPAREd records make up the batch. It is the commit point of the two-phase
commit: a prepared transaction is visible iff the decision of its batch exists
and lists it. A decision is created exclusively, once, and never changed; a
batch whose decision exists is committed and is skipped when Spark replays it.
An *abort entry* (``sparkjournal abort``) decides one epoch of a batch as
aborted: its transactions roll back, and a replay writes the batch again at
the next epoch, whose decision has a file of its own (format/COMMIT_LOG.md).

Crash behaviour: on a local path a decision is written under a temporary name,
fsynced, renamed, and the folder fsynced (files_io), so it is absent or
complete. Elsewhere it is written under a temporary name and moved into place
(an atomic rename on HDFS; on S3 the object appears whole when the copy lands).
On a cluster, put the log on fault-tolerant storage next to the checkpoint: the
default, under the journal root, is only right where the driver's disk is as
durable as the journal.

Everything is JSON or Arrow IPC; nothing read here is unpickled or evaluated.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import os
import time
import uuid

import pyarrow as pa
import pyarrow.fs as pafs

from ..config_keys import one_path_segment
from ..errors import FormatVersionError, SparkJournalError
from ..faults import crash_point
from ..format import strict_json as sj
from ..format.constants import COMMIT_ENTRY as ENTRY, ENTRY_TX as TX, PATHS
from ..io.files_io import fsync_dir, write_file_atomically
from ..io.modes import make_dirs

FORMAT = 1
SCHEMA_FILE = PATHS.SCHEMA_FILE
LOG_ID_FILE = PATHS.LOG_ID_FILE
CACHED_DECISIONS = 4096
OWN_FOLDERS = (PATHS.CHECKPOINTS, PATHS.TIMES, PATHS.FORGOTTEN)
TX_STRINGS = (TX.HOST, TX.ROOT)                  # optional fields of a tx
TX_COUNTS = (TX.ROWS, TX.BYTES, TX.RECORDS)      # optional, absent: 0


class CommitLogError(SparkJournalError):
    """The commit log cannot be read or written."""


@dataclasses.dataclass(frozen=True)
class TxRef:
    """One prepared transaction: which node root, which lane, which tx."""
    node: str
    lane: str
    tx: int


class LinkedNotSyncedError(CommitLogError):
    """An entry was linked into place (decided, as every reader sees it), but
    its folder's sync failed."""

    def __init__(self, path: str, error: OSError):
        super().__init__(f"{path} was created, but its folder could not be synced: {error}")
        self.path = path


class BatchAbortedError(CommitLogError):
    """The batch's entry could not be created: its name was taken (by an
    operator's abort entry, or by another writer's decision)."""


@dataclasses.dataclass
class Decision:
    query: str
    batch: int
    committed_at_ms: int             # the time of the decision (an abort's too)
    txs: list[dict]                  # TxRef fields plus host, root, records, rows, bytes
    epoch: int = 0
    aborted: bool = False            # an abort entry: txs is empty

    @property
    def committed(self) -> bool:
        return not self.aborted

    def tx_refs(self) -> set[TxRef]:
        return {TxRef(t[TX.NODE], t[TX.LANE], t[TX.TX]) for t in self.txs}

    @property
    def rows(self) -> int:
        return sum(t.get(TX.ROWS, 0) for t in self.txs)

    def to_json(self) -> bytes:
        """The entry's JSON; epoch and aborted only where not their default,
        so an epoch-0 commit entry reads the same to readers that predate them."""
        data = {ENTRY.FORMAT: FORMAT, ENTRY.QUERY: self.query, ENTRY.BATCH: self.batch,
                ENTRY.COMMITTED_AT_MS: self.committed_at_ms,
                ENTRY.TXS: self.txs}
        if self.epoch:
            data[ENTRY.EPOCH] = self.epoch
        if self.aborted:
            data[ENTRY.ABORTED] = self.aborted
        return json.dumps(data, sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes, where: str) -> "Decision":
        """The entry in ``raw`` read as COMMIT_LOG.md and JSON.md define it:
        FormatVersionError for a newer format, CommitLogError for anything a
        writer of this format does not write."""
        try:
            data = sj.top_object(sj.loads(raw, "the entry"), "the entry")
            found = sj.newer_format(data, FORMAT)
            if found is not None:
                raise FormatVersionError(where, found, FORMAT, "commit log entry")
            sj.format_of(data, FORMAT)
            txs = [_checked_tx(t) for t in sj.array(data, ENTRY.TXS)]
            aborted = sj.boolean(data, ENTRY.ABORTED, False)
            if aborted and txs:
                raise sj.JsonRefused("an abort entry names no transactions")
            return cls(sj.string(data, ENTRY.QUERY), sj.whole(data, ENTRY.BATCH),
                       sj.whole(data, ENTRY.COMMITTED_AT_MS), txs,
                       sj.whole(data, ENTRY.EPOCH, default=0), aborted)
        except sj.JsonRefused as error:
            raise CommitLogError(f"commit log entry {where} is unreadable ({error}); it "
                                 f"must be a decision written by sparkjournal. Restore it "
                                 f"from a backup; do not delete it (its batch would be "
                                 f"presumed aborted)") from error


def _checked_tx(entry) -> dict:
    """One of an entry's txs, every field COMMIT_LOG.md names of its type
    (read per batch: the usual case is checked inline, the getters name
    what is wrong)."""
    if type(entry) is dict:
        get = entry.get
        tx, rows, size, records = get(TX.TX), get(TX.ROWS, 0), get(TX.BYTES, 0), get(TX.RECORDS, 0)
        if type(get(TX.NODE)) is str and type(get(TX.LANE)) is str and \
                type(get(TX.HOST, "")) is str and type(get(TX.ROOT, "")) is str and \
                type(tx) is int and type(rows) is int and type(size) is int and \
                type(records) is int and 0 <= min(tx, rows, size, records) and \
                tx <= sj.U64 and max(rows, size, records) <= sj.WHOLE:
            return entry
    if type(entry) is not dict:
        raise sj.JsonRefused(f"each of txs must be an object {{node, lane, tx, ...}}, "
                             f"not {sj.show(entry)}")
    sj.string(entry, TX.NODE), sj.string(entry, TX.LANE), sj.integer(entry, TX.TX)
    for name in TX_STRINGS:
        sj.string(entry, name, None)
    for name in TX_COUNTS:
        sj.whole(entry, name, default=0)
    return entry


def default_log_uri(path: str) -> str:
    """The embedded default: ``_commits`` under the journal root as this process
    (the driver) sees it."""
    from .node import resolve_root
    return os.path.join(resolve_root(path), "_commits")


def entry_name(batch: int, epoch: int = 0) -> str:
    """An entry's file name (COMMIT_LOG.md, "Entries")."""
    return f"{batch:020d}.json" if epoch == 0 else f"{batch:020d}.{epoch}.json"


def parse_entry_name(name: str) -> tuple[int, int] | None:
    """(batch, epoch) of an entry's file name, the batch in exactly 20 ASCII
    digits; None for any other name (a batch or epoch past 2^63-1 included:
    no writer names one, COMMIT_LOG.md)."""
    if not name.endswith(".json"):
        return None
    parts = name[:-5].split(".")
    if len(parts[0]) != 20 or not (parts[0].isascii() and parts[0].isdigit()) or len(parts) > 2:
        return None
    batch = int(parts[0])
    if len(parts) == 1:
        return (batch, 0) if batch <= sj.WHOLE else None
    epoch = parts[1]
    if not epoch.isdigit() or epoch.startswith("0") or not epoch.isascii():
        return None
    return (batch, int(epoch)) if max(batch, int(epoch)) <= sj.WHOLE else None


def safe_name(query: str) -> str:
    """A query id as one path segment."""
    if not one_path_segment(query):
        raise SparkJournalError(f"query id {query!r} cannot name a commit log folder: use "
                                f"letters, digits, '-', '_' or '.' and no '/'")
    return query


class CommitLog:
    def __init__(self, uri: str):
        self.uri = uri
        try:
            if "://" in uri:
                self.fs, self.base = pafs.FileSystem.from_uri(uri)
            else:
                self.fs, self.base = pafs.LocalFileSystem(), os.path.abspath(uri)
        except (pa.ArrowInvalid, OSError) as error:
            raise CommitLogError(f"commit log location {uri!r} cannot be used: {error}. "
                                 f"Give a local path or a URI pyarrow.fs supports "
                                 f"(hdfs://, s3://, gs://)") from error
        self.local = isinstance(self.fs, pafs.LocalFileSystem)
        # False only where a benchmark builds many old entries fast: files are
        # then written and renamed without fsync (never for a real decision).
        self.durable = True
        self._cache: dict[tuple[str, int], Decision] = {}     # insertion order: oldest first
        self._log_id: str | None = None

    def _path(self, query: str, batch: int, epoch: int = 0) -> str:
        return f"{self.base}/{safe_name(query)}/{entry_name(batch, epoch)}"

    def decision(self, query: str, batch: int, epoch: int = 0) -> Decision | None:
        """The entry of that epoch of the batch, or None if there is none.
        Found entries are cached (they never change); absent ones are not."""
        key = (query, batch, epoch)
        if key in self._cache:
            return self._cache[key]
        raw = self._read(self._path(query, batch, epoch))
        if raw is None:
            return None
        found = Decision.from_json(raw, self._path(query, batch, epoch))
        if (found.query, found.batch, found.epoch) != (query, batch, epoch):
            raise CommitLogError(f"commit log entry {self._path(query, batch, epoch)} holds the "
                                 f"decision of batch {found.batch} (epoch {found.epoch}) of "
                                 f"query {found.query!r}: restore the file from a backup")
        self._remember(key, found)
        return found

    def _remember(self, key: tuple[str, int, int], decision: Decision) -> None:
        """Caches a decision, the oldest forgotten past CACHED_DECISIONS: a
        process reading a log for months keeps a bounded number."""
        cache = self._cache
        cache[key] = decision
        if len(cache) > CACHED_DECISIONS:
            for old in list(itertools.islice(cache, len(cache) - CACHED_DECISIONS)):
                cache.pop(old, None)

    def entry_keys(self, query: str) -> dict[int, int]:
        """{batch: its highest epoch with an entry} of a query's folder."""
        selector = pafs.FileSelector(f"{self.base}/{safe_name(query)}", allow_not_found=True)
        found: dict[int, int] = {}
        for info in self._call(self.fs.get_file_info, selector):
            key = parse_entry_name(info.base_name)
            if key is not None and key[1] >= found.get(key[0], 0):
                found[key[0]] = key[1]
        return found

    def batches(self, query: str) -> list[int]:
        """Batch ids of a query with an entry (of any epoch), ascending."""
        return sorted(self.entry_keys(query))

    def queries(self) -> list[str]:
        """Queries with a folder of entries: every folder but the log's own
        (``_checkpoints``, ``_times``; a writer named from '_' before those
        existed keeps its folder, new ones are refused)."""
        selector = pafs.FileSelector(self.base, allow_not_found=True)
        infos = self._call(self.fs.get_file_info, selector)
        return sorted(i.base_name for i in infos
                      if i.type == pafs.FileType.Directory and i.base_name not in OWN_FOLDERS)

    def committed_entry(self, query: str, batch: int) -> bool:
        """Whether the batch's epoch-0 entry is a commit entry on disk now
        (one read on the task's path; False also where it must ask the view:
        absent, or an abort entry)."""
        found = self.decision(query, batch)
        return found is not None and found.committed

    def record(self, query: str, batch: int, txs: list[dict], epoch: int = 0,
               aborted: bool = False) -> Decision:
        """Creates the entry of that epoch of the batch, exclusively and
        durably. BatchAbortedError if the name is taken: an operator's abort
        entry (or another writer's decision) landed first.
        Crash behaviour: the entry exists whole or not at all."""
        if query.startswith("_"):
            raise SparkJournalError(f"query id {query!r} starts with '_', which names the commit "
                                    f"log's own folders: choose another txnAppId")
        decision = Decision(query, batch, int(time.time() * 1000), txs, epoch, aborted)
        path = self._path(query, batch, epoch)
        try:
            if self.durable:
                created = self.create_exclusive(path, decision.to_json())
            else:
                self._write(path, decision.to_json())
                created = True
        except LinkedNotSyncedError as linked:
            raise CommitLogError(
                f"commit log entry {linked.path} was created, but its folder could not be synced "
                f"({linked.__cause__}): the batch is "
                f"{'aborted unless' if aborted else 'committed unless'} "
                f"the host loses power before the folder reaches the disk. Do not run the write "
                f"again; check the disk") from linked
        except CommitLogError as error:
            if aborted:
                raise CommitLogError(f"{error}. The batch was not aborted; fix the commit log "
                                     f"location and retry") from error
            raise CommitLogError(f"{error}. The batch was not committed (its prepared data "
                                 f"stays invisible); fix the commit log location and restart "
                                 f"the query") from error
        if not created:
            raise BatchAbortedError(self._taken(query, batch, epoch, aborted))
        self._remember((query, batch, epoch), decision)
        return decision

    def _taken(self, query: str, batch: int, epoch: int, aborting: bool) -> str:
        other = self.decision(query, batch, epoch)
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(other.committed_at_ms / 1e3)) \
            if other else "just now"
        if aborting:
            return (f"batch {batch} of query {query} (epoch {epoch}) was "
                    f"{'aborted at' if other and other.aborted else 'committed at'} {when} before "
                    f"this abort: {'nothing to do' if other and other.aborted else 'a committed batch cannot be aborted'}")
        if other is not None and other.aborted:
            return (f"batch {batch} of query {query} was aborted by an operator (sparkjournal "
                    f"abort) at {when} before its driver committed it: this run's data of the "
                    f"batch stays invisible. Restart the query: Spark replays the batch and the "
                    f"sink writes it again (epoch {epoch + 1})")
        return (f"batch {batch} of query {query} (epoch {epoch}) was decided by another writer "
                f"at {when}: two drivers run this query (or txnAppId) at once; stop one")

    def log_id(self, create: bool = False) -> str | None:
        """This log's id (LOG_ID), made first if ``create`` and there is none.
        Crash behaviour: the id appears whole or not at all (written under a
        temporary name, then linked - locally, failing if another writer won
        the race - or moved into place); whoever reads it after sees one id."""
        if self._log_id is None:
            path = f"{self.base}/{LOG_ID_FILE}"
            raw = self._read(path)
            if raw is None and create:
                made = uuid.uuid4().hex.encode()
                if self.local:
                    make_dirs(self.base)
                    tmp = f"{path}.{uuid.uuid4().hex}.tmp"
                    write_file_atomically(tmp, made)
                    try:
                        os.link(tmp, path)
                    except FileExistsError:
                        pass
                    finally:
                        os.unlink(tmp)
                    fsync_dir(self.base)
                else:
                    self._write(path, made)
                raw = self._read(path)
            self._log_id = raw.decode("ascii", "replace").strip() if raw else None
        return self._log_id

    def read_schema(self) -> pa.Schema | None:
        raw = self._read(f"{self.base}/{SCHEMA_FILE}")
        if raw is None:
            return None
        try:
            return pa.ipc.read_schema(pa.py_buffer(raw))
        except pa.ArrowInvalid as error:
            raise CommitLogError(f"{self.base}/{SCHEMA_FILE} is not an Arrow schema "
                                 f"({error}); restore it or remove it to adopt the next "
                                 f"batch's schema") from error

    def write_schema(self, schema: pa.Schema) -> None:
        self._write(f"{self.base}/{SCHEMA_FILE}", schema.serialize().to_pybytes())

    # --- storage (also of checkpoints and commit times) ------------------------
    def read_bytes(self, path: str) -> bytes | None:
        """A file of the log, None if absent."""
        return self._read(path)

    def write_bytes(self, path: str, data: bytes) -> None:
        """Replaces a file of the log atomically (durably on a local path)."""
        self._write(path, data)

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Creates ``path`` with ``data`` unless it exists; False if another
        writer's file is there. Locally exclusive and durable (link of a
        synced temporary file); elsewhere a check, then a move: two writers
        racing there may both write it, the last one whole."""
        try:
            if self.local:
                make_dirs(os.path.dirname(path))
                tmp = f"{path}.{uuid.uuid4().hex}.tmp"
                write_file_atomically(tmp, data,
                                      written=lambda: crash_point("commit-log:exclusive-written"))
                try:
                    os.link(tmp, path)
                except FileExistsError:
                    return False
                finally:
                    os.unlink(tmp)
                try:
                    fsync_dir(os.path.dirname(path))
                except OSError as unsynced:
                    raise LinkedNotSyncedError(path, unsynced) from unsynced
                return True
        except OSError as error:
            raise CommitLogError(f"cannot write commit log file {path}: {error}") from error
        if self._call(self.fs.get_file_info, path).type != pafs.FileType.NotFound:
            return False
        self._write(path, data)
        return True

    def list_names(self, folder: str) -> list[pafs.FileInfo]:
        """The files and folders in ``folder`` (none if it does not exist)."""
        return self._call(self.fs.get_file_info,
                          pafs.FileSelector(folder, allow_not_found=True))

    def delete(self, paths: list[str]) -> None:
        """Deletes files of the log (gone already is fine); the folder is
        synced once at the end on a local path."""
        folders = set()
        for path in paths:
            try:
                self.fs.delete_file(path)
                folders.add(path.rsplit("/", 1)[0])
            except FileNotFoundError:
                pass
            except OSError as error:
                raise CommitLogError(f"cannot delete commit log file {path}: {error}") from error
        if self.local:
            for folder in folders:
                if os.path.isdir(folder):
                    fsync_dir(folder)

    def delete_dir_if_empty(self, folder: str) -> None:
        if self.local:
            try:
                os.rmdir(folder)
            except OSError:
                pass                    # not empty (a new entry raced in) or gone
        elif not self.list_names(folder):
            self.fs.delete_dir(folder)

    def _read(self, path: str) -> bytes | None:
        try:
            with self.fs.open_input_stream(path) as stream:
                return stream.read()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise CommitLogError(f"cannot read commit log file {path}: {error}") from error

    def _write(self, path: str, data: bytes) -> None:
        try:
            if self.local:
                make_dirs(os.path.dirname(path))
                if self.durable:
                    write_file_atomically(path, data)
                else:
                    with open(f"{path}.tmp", "wb") as handle:
                        handle.write(data)
                    os.replace(f"{path}.tmp", path)
                return
            self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
            tmp = f"{path}.{uuid.uuid4().hex}.tmp"
            with self.fs.open_output_stream(tmp) as stream:
                stream.write(data)
            self.fs.move(tmp, path)
        except OSError as error:
            raise CommitLogError(f"cannot write commit log file {path}: {error}") from error

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except OSError as error:
            raise CommitLogError(f"cannot list commit log {self.uri}: {error}") from error
