"""What a load hands back: live records, prepared transactions, and the report of
everything the load noticed (torn tails, rollbacks, recoveries)."""
from __future__ import annotations

import dataclasses
from typing import Callable


@dataclasses.dataclass
class Record:
    """A live committed record: its ADD with the body of its latest UPDATE."""

    record_id: int
    user_type: int
    body_len: int
    file_id: int            # where the current version lives
    offset: int
    large: bool
    _read: Callable[["Record"], memoryview] = dataclasses.field(repr=False, compare=False, default=None)

    @property
    def body(self) -> memoryview:
        """The body bytes (a zero-copy view of the data file where possible).

        Valid while the journal or snapshot that produced it is open."""
        return self._read(self)


@dataclasses.dataclass
class PreparedTransaction:
    """A transaction whose PREPARE is durable and whose outcome is not: the
    caller decides (Journal.commit / Journal.rollback)."""

    tx_id: int
    xid: bytes
    record_ids: list[int]


@dataclasses.dataclass
class TornTail:
    file: str
    offset: int             # where the torn bytes begin: the end of data
    records_dropped: int    # complete records found after it, never acknowledged
    bytes_dropped: int


@dataclasses.dataclass
class Recovery:
    """What recovery mode did with one damaged file."""

    file: str
    moved_to: str
    offset: int
    detail: str
    lost_record_ids: list[int]
    lost_tx_ids: list[int]


@dataclasses.dataclass
class LoadReport:
    files: int = 0
    records_scanned: int = 0
    live_records: int = 0
    bytes_scanned: int = 0
    crc_deferred: int = 0             # records whose CRC is checked when read (deferred_crc.py)
    prepared_tx_ids: list[int] = dataclasses.field(default_factory=list)
    rolled_back_tx_ids: list[int] = dataclasses.field(default_factory=list)
    broken_tx_ids: list[int] = dataclasses.field(default_factory=list)   # commit count mismatch
    torn_tail: TornTail | None = None
    attic: list[str] = dataclasses.field(default_factory=list)           # files moved aside at open
    recoveries: list[Recovery] = dataclasses.field(default_factory=list)
    orphan_bodies_removed: int = 0
    warnings: list[str] = dataclasses.field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{self.files} files", f"{self.records_scanned} records scanned",
                 f"{self.live_records} live"]
        if self.prepared_tx_ids:
            parts.append(f"{len(self.prepared_tx_ids)} prepared tx")
        if self.rolled_back_tx_ids:
            parts.append(f"{len(self.rolled_back_tx_ids)} unfinished tx rolled back")
        if self.broken_tx_ids:
            parts.append(f"{len(self.broken_tx_ids)} tx with a commit count mismatch not applied")
        if self.torn_tail:
            parts.append(f"torn tail at {self.torn_tail.file}:{self.torn_tail.offset} "
                         f"({self.torn_tail.records_dropped} unacknowledged records dropped)")
        if self.attic:
            parts.append(f"{len(self.attic)} files moved to attic")
        if self.recoveries:
            lost = sum(len(r.lost_record_ids) for r in self.recoveries)
            parts.append(f"recovery moved {len(self.recoveries)} damaged files aside, {lost} records lost")
        return ", ".join(parts)
