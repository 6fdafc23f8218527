"""What a scan of one data file found (both codecs return this shape).

Columns are parallel sequences with one entry per valid record of the scanned
file id, in file order: first the ``n_clean`` records before the first foreign
byte, then any found after it. Columns are memoryviews (native codec) or
array.array (Python codec); compare them as lists.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(eq=False)
class ScanResult:
    n: int                      # valid records of this file id, before and after damage
    types: Sequence[int]        # u8
    flags: Sequence[int]        # u8
    user_types: Sequence[int]   # u16
    body_lens: Sequence[int]    # u32
    counts: Sequence[int]       # u32
    record_ids: Sequence[int]   # u64
    tx_ids: Sequence[int]       # u64
    offsets: Sequence[int]      # u64: where each record starts in the buffer
    clean_end: int              # end of the last record before first_foreign (start if none)
    first_foreign: int          # first foreign 8-byte word, -1 if the data is clean
    foreign_reason: str         # why first_foreign is foreign, "" if clean
    n_clean: int                # records before first_foreign
    scan_end: int               # where scanning stopped: len(buffer) rounded down to 8

    @property
    def damaged(self) -> bool:
        return self.first_foreign >= 0

    def body_offset(self, index: int) -> int:
        """Where record ``index``'s body starts in the buffer."""
        return self.offsets[index] + 40

    def __repr__(self) -> str:
        return (f"ScanResult(n={self.n}, n_clean={self.n_clean}, clean_end={self.clean_end}, "
                f"first_foreign={self.first_foreign}, foreign_reason={self.foreign_reason!r}, "
                f"scan_end={self.scan_end})")
