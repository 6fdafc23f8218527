"""The commit log: the driver's durable decision for every batch it committed.

Layout, under the log's base URI (a local path, ``hdfs://...``, ``s3://...``;
reached through ``pyarrow.fs``), defined in format/COMMIT_LOG.md::

    <base>/<query>/<batch id, 20 digits>.json    one Decision per committed batch
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
and lists it. A decision is written once and never changed; a batch whose
decision exists is committed and is skipped when Spark replays it.

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
from ..io.files_io import fsync_dir, write_file_atomically
from ..io.modes import make_dirs

FORMAT = 1
SCHEMA_FILE = "schema.arrow"
LOG_ID_FILE = "LOG_ID"
CACHED_DECISIONS = 4096
OWN_FOLDERS = ("_checkpoints", "_times")


class CommitLogError(SparkJournalError):
    """The commit log cannot be read or written."""


@dataclasses.dataclass(frozen=True)
class TxRef:
    """One prepared transaction: which node root, which lane, which tx."""
    node: str
    lane: str
    tx: int


@dataclasses.dataclass
class Decision:
    query: str
    batch: int
    committed_at_ms: int
    txs: list[dict]                  # TxRef fields plus host, root, records, rows, bytes

    def tx_refs(self) -> set[TxRef]:
        return {TxRef(t["node"], t["lane"], int(t["tx"])) for t in self.txs}

    @property
    def rows(self) -> int:
        return sum(int(t.get("rows", 0)) for t in self.txs)

    def to_json(self) -> bytes:
        return json.dumps({"format": FORMAT, **dataclasses.asdict(self)},
                          sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes, where: str) -> "Decision":
        try:
            data = json.loads(raw)
            if not isinstance(data, dict):
                raise ValueError(f"not a format {FORMAT} decision (not a JSON object)")
            found = data.get("format")
            if isinstance(found, int) and not isinstance(found, bool) and found > FORMAT:
                raise FormatVersionError(where, found, FORMAT, "commit log entry")
            if found != FORMAT:
                raise ValueError(f"format {found!r}, expected {FORMAT}")
            txs = data["txs"]
            if not isinstance(txs, list) or not all(_is_tx(t) for t in txs):
                raise ValueError("txs must be a list of {node, lane, tx, ...} with whole row counts")
            return cls(str(data["query"]), int(data["batch"]), int(data["committed_at_ms"]), txs)
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as error:
            raise CommitLogError(f"commit log entry {where} is unreadable ({error}); it "
                                 f"must be a decision written by sparkjournal. Restore it "
                                 f"from a backup; do not delete it (its batch would be "
                                 f"presumed aborted)") from error


def _is_tx(entry) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("node"), str) and
            isinstance(entry.get("lane"), str) and type(entry.get("tx")) is int and
            type(entry.get("rows", 0)) is int)


def default_log_uri(path: str) -> str:
    """The embedded default: ``_commits`` under the journal root as this process
    (the driver) sees it."""
    from .node import resolve_root
    return os.path.join(resolve_root(path), "_commits")


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

    def _path(self, query: str, batch: int) -> str:
        return f"{self.base}/{safe_name(query)}/{batch:020d}.json"

    def decision(self, query: str, batch: int) -> Decision | None:
        """The batch's decision, or None if it was never committed. Found
        decisions are cached (they never change); absent ones are not."""
        key = (query, batch)
        if key in self._cache:
            return self._cache[key]
        raw = self._read(self._path(query, batch))
        if raw is None:
            return None
        found = Decision.from_json(raw, self._path(query, batch))
        self._remember(key, found)
        return found

    def _remember(self, key: tuple[str, int], decision: Decision) -> None:
        """Caches a decision, the oldest forgotten past CACHED_DECISIONS: a
        process reading a log for months keeps a bounded number."""
        cache = self._cache
        cache[key] = decision
        if len(cache) > CACHED_DECISIONS:
            for old in list(itertools.islice(cache, len(cache) - CACHED_DECISIONS)):
                cache.pop(old, None)

    def batches(self, query: str) -> list[int]:
        """Committed batch ids of a query, ascending."""
        selector = pafs.FileSelector(f"{self.base}/{safe_name(query)}", allow_not_found=True)
        names = [info.base_name for info in self._call(self.fs.get_file_info, selector)]
        return sorted(int(n[:-5]) for n in names if n.endswith(".json") and n[:-5].isdigit())

    def queries(self) -> list[str]:
        """Queries with a folder of entries: every folder but the log's own
        (``_checkpoints``, ``_times``; a writer named from '_' before those
        existed keeps its folder, new ones are refused)."""
        selector = pafs.FileSelector(self.base, allow_not_found=True)
        infos = self._call(self.fs.get_file_info, selector)
        return sorted(i.base_name for i in infos
                      if i.type == pafs.FileType.Directory and i.base_name not in OWN_FOLDERS)

    def entry_exists(self, query: str, batch: int) -> bool:
        """Whether the batch's entry is on disk now (one stat; nothing cached)."""
        key = (query, batch)
        if key in self._cache:
            return True
        info = self._call(self.fs.get_file_info, self._path(query, batch))
        return info.type == pafs.FileType.File

    def record(self, query: str, batch: int, txs: list[dict]) -> Decision:
        """Durably writes the decision of a batch. The caller checked it is not
        decided yet (a decision is never overwritten)."""
        if query.startswith("_"):
            raise SparkJournalError(f"query id {query!r} starts with '_', which names the commit "
                                    f"log's own folders: choose another txnAppId")
        decision = Decision(query, batch, int(time.time() * 1000), txs)
        try:
            self._write(self._path(query, batch), decision.to_json())
        except CommitLogError as error:
            raise CommitLogError(f"{error}. The batch was not committed (its prepared data "
                                 f"stays invisible); fix the commit log location and restart "
                                 f"the query") from error
        self._remember((query, batch), decision)
        return decision

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
                fsync_dir(os.path.dirname(path))
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
