"""Fuzz target: the record scan of one data file, C codec against Python codec.

Input: one control byte, the file id (u32) the scan looks for, then the bytes
of the file from where records start. Control byte: bit 0 fix up the record
CRCs first (common.fix_record_crcs), bit 1 scan without CRC checks, bits 2-6
the start offset (0..31, odd ones too: the scan rounds up).

Properties: both codecs return the same records, the same end of clean data
and the same reason (neither raises: a scan has no error to give); the C scan
never reads past the buffer (it ends at a guard page); every record found lies
inside the buffer, belongs to the file, starts 8-aligned after the previous
one, and with CRC checks on has a right CRC.
"""
from __future__ import annotations

from tests.fuzz.common import (GuardedBuffer, NATIVE, PY, fix_record_crcs, layout,
                               record_crc_ok, run)

MAX_LEN = 1 << 20
GUARDED = GuardedBuffer(MAX_LEN)
FIELDS = ("types", "flags", "user_types", "body_lens", "counts", "record_ids", "tx_ids", "offsets")


def summary(result) -> tuple:
    return (result.n, result.n_clean, result.clean_end, result.first_foreign,
            result.foreign_reason, result.scan_end,
            tuple(tuple(getattr(result, name).tolist()) for name in FIELDS))


def check(result, view, start: int, file_id32: int, verify_crc: bool) -> None:
    assert 0 <= result.n_clean <= result.n, result
    assert result.scan_end == len(view) & ~7
    if result.damaged:
        assert result.clean_end <= result.first_foreign < result.scan_end, result
        assert result.foreign_reason, result
    previous_end = (start + 7) & ~7
    for index in range(result.n):
        offset, body_len = result.offsets[index], result.body_lens[index]
        assert offset % 8 == 0 and offset >= previous_end, (index, offset, previous_end)
        previous_end = offset + layout.record_size(body_len)
        assert offset + layout.RECORD_HEADER_SIZE + body_len <= len(view), (index, offset)
        assert 1 <= result.types[index] <= layout.ROLLBACK
        if verify_crc:
            assert record_crc_ok(view, offset, file_id32), f"record {index} at {offset}: bad crc"
    if result.n_clean:
        last = result.n_clean - 1
        assert result.clean_end == result.offsets[last] + layout.record_size(result.body_lens[last])


def test_one_input(data: bytes) -> None:
    if len(data) < 5 or len(data) > MAX_LEN:
        return
    control, file_id32 = data[0], int.from_bytes(data[1:5], "little")
    body = bytearray(data[5:])
    start = (control >> 2) & 31
    if control & 1:
        fix_record_crcs(body, start)
    verify_crc = not control & 2
    view = GUARDED.place(bytes(body))
    python = PY.scan(view, start, file_id32, verify_crc)
    check(python, view, start, file_id32, verify_crc)
    if NATIVE is not None:
        native = NATIVE.scan(view, start, file_id32, verify_crc)
        assert summary(native) == summary(python), f"codecs disagree: {native} vs {python}"


if __name__ == "__main__":
    run(test_one_input)
