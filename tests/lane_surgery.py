"""On-disk surgery for the tests that damage journals on purpose: where each
record of a lane lies (through the journal's own loader and scanner, read-only),
and byte patches at an offset."""
from __future__ import annotations

import dataclasses

from sparkjournal.format import codec_python, layout
from sparkjournal.journal.loader import load


@dataclasses.dataclass
class Extent:
    offset: int
    size: int
    rtype: int
    record_id: int
    tx_id: int


@dataclasses.dataclass
class ScannedFile:
    path: str
    file_id: int
    records: list   # [Extent] in file order


def scan_lane(lane: str) -> list[ScannedFile]:
    """Every data file with records, in file-id order, with each record's extent
    (read only; uses the journal's own loader and scanner)."""
    loaded = load(lane, verify_crc=True, writable=False)
    try:
        out = []
        for f in loaded.files:
            s = f.scan
            records = [Extent(int(s.offsets[i]), layout.record_size(int(s.body_lens[i])),
                              int(s.types[i]), int(s.record_ids[i]), int(s.tx_ids[i]))
                       for i in range(f.n_data)]
            if records:
                out.append(ScannedFile(f.path, f.file_id, records))
        return out
    finally:
        for f in loaded.files:
            f.mapped.close()


def patch(path: str, offset: int, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def read_at(path: str, offset: int, size: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return handle.read(size)


def flip(path: str, offset: int) -> None:
    patch(path, offset, bytes([read_at(path, offset, 1)[0] ^ 0xFF]))


def damage_a_sealed_record(lane: str) -> tuple[str, int]:
    """Flips a byte in the body of a record in the middle of the lane's first
    file with records, which a later file seals: damage before the tail, which
    every load of the lane refuses (CorruptJournalError naming the file and the
    offset) unless it recovers. The lane needs two files with records.
    Returns (the file, the damaged record's offset)."""
    first, *later = scan_lane(lane)
    assert later, f"{lane} has one file with records: its damage could be a torn tail"
    victim = first.records[len(first.records) // 2]
    flip(first.path, victim.offset + layout.RECORD_HEADER_SIZE + 10)
    return first.path, victim.offset


def reseal(path: str, offset: int) -> None:
    """The record at ``offset`` gets the CRC of its (changed) bytes."""
    body_len = int.from_bytes(read_at(path, offset + 12, 4), "little")
    crc = codec_python.crc32c(read_at(path, offset + 4, 36 + body_len))
    patch(path, offset, crc.to_bytes(4, "little"))
