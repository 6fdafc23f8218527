"""Fuzz target: the data file header parser (datafile.decode_header).

Input: one control byte (bit 0: fix up the header CRC first, for whatever
version the bytes name) and the header block. decode_header documents two
errors: BadHeader (the file goes to the attic) and FormatVersionError.

Properties of an accepted header: the checks FORMAT.md states hold (size a
multiple of 4096, a known block size, sealed end inside the file), and
encoding it again gives a header that decodes to the same fields.
"""
from __future__ import annotations

import dataclasses

from tests.fuzz.common import allowed, atheris, fix_header_crc, layout, run

with atheris.instrument_imports(include=["sparkjournal"]):
    from sparkjournal.journal.datafile import BadHeader, decode_header

ALLOWED = allowed(BadHeader)


def test_one_input(data: bytes) -> None:
    if not data:
        return
    raw = bytearray(data[1:])
    if data[0] & 1:
        fix_header_crc(raw)
    try:
        header = decode_header(bytes(raw), "fuzzed-header")
    except ALLOWED:
        return
    assert header.file_size % layout.FILE_SIZE_MULTIPLE == 0
    assert header.block_size in (512, 1024, 2048, 4096)
    assert 0 <= header.sealed_end <= header.file_size and header.sealed_end % 8 == 0
    assert 1 <= header.format_version <= layout.FORMAT_VERSION
    again = decode_header(header.encode(), "re-encoded")
    # encode() stamps the time when created_ns is 0; every other field must survive
    expected = dataclasses.replace(header, format_version=layout.FORMAT_VERSION,
                                   created_ns=header.created_ns or again.created_ns)
    assert again == expected, (header, again)


if __name__ == "__main__":
    run(test_one_input)
