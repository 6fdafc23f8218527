"""Writes commit log checkpoints and applies the log's retention
(format/COMMIT_LOG.md, "Checkpoints" and "Retention").

``checkpoint`` folds every entry past the newest readable checkpoint - every
query folder listed, so a decision past a gap in a writer's batch ids is
folded too - writes the commit times of the folded batches, then creates the
next checkpoint exclusively. ``expire`` then deletes what two checkpoints
cover and the retention options no longer protect.

Crash behaviour: killed before the checkpoint is linked, only commit-time
segments were extended (never read for batches no checkpoint covers) and a
``*.tmp`` may be left (expire removes it after an hour); killed while
deleting, some covered entries are gone and some not, and every reader's view
is the same either way: the next expire finishes. Two writers racing build
the same folds; the loser finds the name taken and leaves the winner's.

The driver runs both in one background thread after a decision
(``Checkpointer.after_decision``): never on the batch's path.
"""
from __future__ import annotations

import dataclasses
import fcntl
import logging
import os
import threading
import time

from ..errors import LockSupportError
from ..events import commit_times
from ..faults import crash_point
from ..io.modes import create_file, make_dirs
from ..journal.record_lock import try_write_lock
from ..events.commit_log import CommitLog, parse_entry_name
from ..events.log_checkpoint import CheckpointDamage, parse
from ..events.log_view import (CHECKPOINTS, ONE_SHOT_PREFIX, checkpoint_names, entries_after,
                               newest_checkpoint)

log = logging.getLogger("sparkjournal.commitlog")

TMP_AGE_S = 3600
LOCK_FILE = "checkpoint.lock"


@dataclasses.dataclass
class LogMaintenance:
    checkpoint: str | None = None      # the checkpoint created, if any
    folded: int = 0                    # entries folded into it
    deleted_entries: int = 0
    deleted_checkpoints: int = 0
    deleted_tmp: int = 0
    seconds: float = 0.0
    skipped: str = ""                  # why nothing was done

    def line(self) -> str:
        if self.skipped:
            return f"commit log: no checkpoint or retention: {self.skipped}"
        made = (f"checkpoint {self.checkpoint} folded {self.folded} entries"
                if self.checkpoint else "no new checkpoint")
        return (f"commit log: {made}; retention deleted {self.deleted_entries} entries, "
                f"{self.deleted_checkpoints} old checkpoints, {self.deleted_tmp} stale "
                f"temporary files ({self.seconds * 1e3:.0f} ms)")


def checkpoint(commit_log: CommitLog, now_ms: int | None = None,
               renew_older_than_ms: int | None = None) -> tuple[str | None, int]:
    """Creates the next checkpoint if any entry is past the newest one, or
    the newest was written before ``renew_older_than_ms`` (a log no writer
    adds to still gets the second checkpoint retention needs); (its file
    name or None, entries folded)."""
    names = checkpoint_names(commit_log)
    _name, base = newest_checkpoint(commit_log, names)
    entries = entries_after(commit_log, base, {})
    state = base.with_entries(entries)            # an abort entry folds nothing (COMMIT_LOG.md)
    folded = {query: times for query, found in entries.items()
              if (times := {batch: d.committed_at_ms for batch, d in found.items() if d.committed})}
    stale = (renew_older_than_ms is not None and base.seq >= 0
             and base.written_at_ms < renew_older_than_ms)
    if not folded and not stale:
        return None, 0
    for query, times in folded.items():           # before the checkpoint that covers them
        commit_times.extend(commit_log, query, times)
    crash_point("log-checkpoint:times-written")
    state.seq = int(names[0][:-5]) + 1 if names else 0     # past a damaged newest one too
    state.written_at_ms = int(time.time() * 1000) if now_ms is None else now_ms
    name = f"{state.seq:020d}.json"
    if not commit_log.create_exclusive(f"{commit_log.base}/{CHECKPOINTS}/{name}", state.to_json()):
        return None, 0                            # another writer's checkpoint stands
    crash_point("log-checkpoint:linked")
    return name, sum(map(len, folded.values()))


def expire(commit_log: CommitLog, retain_batches: int, retain_ns: int,
           now: float | None = None) -> tuple[int, int, int]:
    """Retention (module doc); (entries, checkpoints, temporary files) deleted."""
    now = time.time() if now is None else now
    names = checkpoint_names(commit_log)
    tmp = _stale_tmp(commit_log, now)
    if len(names) < 2:
        commit_log.delete(tmp)
        return 0, 0, len(tmp)
    raw = commit_log.read_bytes(f"{commit_log.base}/{CHECKPOINTS}/{names[1]}")
    try:
        previous = parse(raw or b"", f"{commit_log.base}/{CHECKPOINTS}/{names[1]}",
                         int(names[1][:-5]))
    except CheckpointDamage as damage:             # the next checkpoint's expire goes on
        log.warning("%s: retention waits for the next checkpoint", damage)
        commit_log.delete(tmp)
        return 0, 0, len(tmp)
    young = now - retain_ns / 1e9
    entries = []
    for query in commit_log.queries():
        through = previous.through(query)
        if through < 0:
            continue
        folder = f"{commit_log.base}/{query}"
        found: dict[int, list] = {}                   # batch: its entries of every epoch
        for info in commit_log.list_names(folder):
            key = parse_entry_name(info.base_name)
            if key is not None:
                found.setdefault(key[0], []).append(info)
        one_shot = query.startswith(ONE_SHOT_PREFIX)
        kept = set() if one_shot or not retain_batches else set(sorted(found)[-retain_batches:])
        old = {batch: infos for batch, infos in found.items()
               if batch <= through and batch not in kept
               and all(i.mtime is not None and i.mtime.timestamp() < young for i in infos)}
        ensure_times(commit_log, query, old)
        paths = [info.path for batch in sorted(old) for info in old[batch]]
        for start in range(0, len(paths), 16):
            commit_log.delete(paths[start:start + 16])
            crash_point("log-retention:deleting")
        entries += paths
        if one_shot and len(old) == len(found):
            commit_log.delete_dir_if_empty(folder)
    older = [f"{commit_log.base}/{CHECKPOINTS}/{n}" for n in names[2:]]
    commit_log.delete(older + tmp)
    return len(entries), len(older), len(tmp)


def ensure_times(commit_log: CommitLog, query: str, entries: dict) -> None:
    """Before retention deletes ``entries`` ({batch: the FileInfo of each of
    its entries}), every one's commit
    time is in the segments: those missing (a segment written by a writer
    that lost a race, or restored from an older copy) are written from the
    entries, which still exist."""
    times = commit_times.CommitTimes(commit_log)
    missing = {}
    for batch in entries:
        if times.committed_at_ms(query, batch) is None:
            epoch = max(parse_entry_name(info.base_name)[1] for info in entries[batch])
            decision = commit_log.decision(query, batch, epoch)
            if decision is not None and decision.committed:
                missing[batch] = decision.committed_at_ms
    if missing:
        log.warning("commit log %s: %d commit times of %s were not in their segments; written "
                    "from the entries before retention deletes them", commit_log.uri,
                    len(missing), query)
        commit_times.extend(commit_log, query, missing)


def _stale_tmp(commit_log: CommitLog, now: float) -> list[str]:
    folders = [f"{commit_log.base}/{CHECKPOINTS}", commit_log.base]
    folders += [f"{commit_log.base}/{q}" for q in commit_log.queries()]
    folders += [i.path for i in commit_log.list_names(f"{commit_log.base}/_times")
                if not i.is_file]
    return [info.path for folder in folders for info in commit_log.list_names(folder)
            if info.base_name.endswith(".tmp") and info.mtime is not None
            and info.mtime.timestamp() < now - TMP_AGE_S]


def maintain(commit_log: CommitLog, config, now: float | None = None) -> LogMaintenance:
    """A checkpoint (renewed if older than commitLogRetainTime), then
    retention, with the journal config's options, under the log's checkpoint
    lock (not waited for: a writer that finds it held leaves both to the
    holder). Nothing on a log that is not on a local file system (module doc)."""
    started = time.perf_counter()
    if not commit_log.local:
        return LogMaintenance(skipped=f"{commit_log.uri} is not on a local file system: its "
                              f"entries are all kept (format/COMMIT_LOG.md)")
    lock = _checkpoint_lock(commit_log)
    if lock is None:
        return LogMaintenance(skipped="another process is checkpointing this log")
    try:
        wall = time.time() if now is None else now
        name, folded = checkpoint(commit_log, renew_older_than_ms=int(
            (wall - config.commitLogRetainTime / 1e9) * 1000))
        entries, checkpoints, tmp = expire(commit_log, config.commitLogRetainBatches,
                                           config.commitLogRetainTime, now)
    finally:
        os.close(lock)
    return LogMaintenance(name, folded, entries, checkpoints, tmp, time.perf_counter() - started)


def _checkpoint_lock(commit_log: CommitLog) -> int | None:
    """An fd holding ``_checkpoints/checkpoint.lock`` exclusively, None if
    another holds it: an flock (other Python processes) and, on the same
    descriptor, an OFD write lock (journal/record_lock.py), which a JVM
    driver's record lock refuses and is refused by
    (jvm/.../events/LogMaintenance.java). Where there are no OFD locks the
    flock is held alone: a JVM checkpointer may then race this one, which the
    spec makes safe (the loser of the exclusive create finds the name taken).
    Crash behaviour: the kernel releases both with the process."""
    folder = f"{commit_log.base}/{CHECKPOINTS}"
    make_dirs(folder)
    path = f"{folder}/{LOCK_FILE}"
    fd = create_file(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    try:
        held = try_write_lock(fd, path)
    except LockSupportError:
        held = True
    except BaseException:
        os.close(fd)
        raise
    if not held:                                  # a JVM driver holds its record lock
        os.close(fd)
        return None
    return fd


class Checkpointer:
    """The driver's: after each decision, checkpoints in a thread of its own
    once ``commitLogCheckpointInterval`` decided batches are past the last
    checkpoint; one run at a time per log in this process (``for_log``), one
    per log across processes (the checkpoint lock); a failure is logged (the
    next decision tries again), never raised into a batch."""

    def __init__(self, commit_log: CommitLog, config):
        self.commit_log, self.config = commit_log, config
        self._running: threading.Thread | None = None
        self._starting = threading.Lock()
        self.last: LogMaintenance | None = None

    def after_decision(self, entries_past_checkpoint: int) -> threading.Thread | None:
        interval = self.config.commitLogCheckpointInterval
        if not interval or entries_past_checkpoint < interval or not self.commit_log.local:
            return None
        with self._starting:
            if self._running is not None and self._running.is_alive():
                return None
            self._running = threading.Thread(target=self._run, daemon=True,
                                             name="sparkjournal-log-checkpoint")
            self._running.start()
            return self._running

    def wait(self) -> None:
        """Returns once no checkpoint of this checkpointer is running."""
        running = self._running
        if running is not None:
            running.join()

    def _run(self) -> None:
        try:
            self.last = maintain(self.commit_log, self.config)
            log.info("%s", self.last.line())
        except Exception as error:                 # noqa: BLE001 - reported, retried
            log.warning("commit log %s: checkpoint or retention failed (%s); the next "
                        "decided batch tries again", self.commit_log.uri, error)


_CHECKPOINTERS: dict[str, Checkpointer] = {}
_MADE = threading.Lock()


def for_log(commit_log: CommitLog, config) -> Checkpointer:
    """The one Checkpointer of the log at ``commit_log.uri`` in this process,
    with the latest caller's options (each DataSource batch makes its own
    committer; they share this)."""
    with _MADE:
        found = _CHECKPOINTERS.get(commit_log.uri)
        if found is None:
            found = _CHECKPOINTERS[commit_log.uri] = Checkpointer(commit_log, config)
        found.config = config
        return found
