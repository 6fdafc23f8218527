"""Commit times of folded batches: ``_times/<query>/<segment>.times``
(format/COMMIT_LOG.md, "Commit times").

An event's ``_commit_time`` is its batch's decision time; once retention has
deleted the entry, the segment is where it lives: 8 bytes per batch, 16,384
batches per segment, written by the checkpoint writer before the checkpoint
that folds them (so a checkpoint never covers a batch whose time is not on
disk). A segment is only ever extended, atomically (tmp, fsync, rename).

Damage (magic, size, CRC) raises CommitTimesDamage naming the file.
"""
from __future__ import annotations

import collections
import struct
import threading

from ..format.codec import CODEC
from ..format.constants import MAGICS, magic
from .commit_log import CommitLog, CommitLogError, safe_name

SEGMENT = 16384
MAGIC = magic(MAGICS.COMMIT_TIMES)
FORMAT = 1
HEAD = struct.Struct("<4sIQI")
NOT_DECIDED = -1
CACHED_SEGMENTS = 64
WHAT_TO_DO = (": restore it from a backup; meanwhile read with skipCorrupt=true (the "
              "_commit_time of its batches is null)")


class CommitTimesDamage(CommitLogError):
    """A commit-time segment that is not one this format defines."""


def segment_path(log: CommitLog, query: str, segment: int) -> str:
    return f"{log.base}/_times/{safe_name(query)}/{segment:020d}.times"


def encode(first: int, times: list[int]) -> bytes:
    body = HEAD.pack(MAGIC, FORMAT, first, len(times)) + struct.pack(f"<{len(times)}q", *times)
    return body + CODEC.crc32c(body).to_bytes(4, "little")


def decode(raw: bytes, where: str, segment: int) -> list[int]:
    if len(raw) < HEAD.size + 4:
        raise CommitTimesDamage(f"commit-time segment {where} is {len(raw)} bytes, too short{WHAT_TO_DO}")
    magic, version, first, count = HEAD.unpack_from(raw)
    if magic != MAGIC:
        raise CommitTimesDamage(f"commit-time segment {where} does not start with {MAGIC!r}{WHAT_TO_DO}")
    if version != FORMAT:
        from ..errors import FormatVersionError
        if version > FORMAT:
            raise FormatVersionError(where, version, FORMAT, "commit-time segment")
        raise CommitTimesDamage(f"commit-time segment {where} has format {version}{WHAT_TO_DO}")
    if first != segment * SEGMENT or not 1 <= count <= SEGMENT or \
            len(raw) != HEAD.size + 8 * count + 4:
        raise CommitTimesDamage(f"commit-time segment {where}: first batch {first}, {count} "
                                f"slots in {len(raw)} bytes do not fit its name{WHAT_TO_DO}")
    if CODEC.crc32c(raw[:-4]) != int.from_bytes(raw[-4:], "little"):
        raise CommitTimesDamage(f"commit-time segment {where} fails its CRC{WHAT_TO_DO}")
    return list(struct.unpack_from(f"<{count}q", raw, HEAD.size))


class CommitTimes:
    """Reads segments of one log, a bounded number cached; thread-safe."""

    def __init__(self, log: CommitLog):
        self.log = log
        self._cache: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()

    def committed_at_ms(self, query: str, batch: int) -> int | None:
        """The batch's decision time, or None if this log's segments say it was
        not decided (or do not reach it)."""
        segment, slot = divmod(batch, SEGMENT)
        key = (query, segment)
        with self._lock:
            times = self._cache.get(key)
            if times is not None:
                self._cache.move_to_end(key)
        if times is None or slot >= len(times):     # absent, or extended since
            times = self.read(query, segment)
            with self._lock:
                self._cache[key] = times
                while len(self._cache) > CACHED_SEGMENTS:
                    self._cache.popitem(last=False)
        found = times[slot] if slot < len(times) else NOT_DECIDED
        return None if found == NOT_DECIDED else found

    def read(self, query: str, segment: int) -> list[int]:
        path = segment_path(self.log, query, segment)
        raw = self.log.read_bytes(path)
        return [] if raw is None else decode(raw, path, segment)


def extend(log: CommitLog, query: str, decided: dict[int, int]) -> None:
    """Writes ``{batch: committed_at_ms}`` into the query's segments, each
    segment rewritten whole (slots between stay NOT_DECIDED). Crash behaviour:
    each segment is replaced atomically; a crash leaves some extended and no
    checkpoint yet covering them (harmless: the next writer rewrites them)."""
    by_segment: dict[int, dict[int, int]] = {}
    for batch, at in decided.items():
        by_segment.setdefault(batch // SEGMENT, {})[batch % SEGMENT] = at
    for segment, slots in sorted(by_segment.items()):
        times = CommitTimes(log).read(query, segment)
        end = max(len(times), max(slots) + 1)
        times += [NOT_DECIDED] * (end - len(times))
        for slot, at in slots.items():
            times[slot] = at
        log.write_bytes(segment_path(log, query, segment), encode(segment * SEGMENT, times))
