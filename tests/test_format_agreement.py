"""The C and Python codecs, and layout.py's struct formats, agree byte for byte
(FORMAT.md is the one description; these tests hold all three to it)."""
from __future__ import annotations

import os
import re
import struct

import pytest
from hypothesis import given, settings, strategies as st

from sparkjournal.format import codec_python, layout
from sparkjournal.format.codec import load_codec

try:
    from sparkjournal.format import codec_native
except ImportError:
    codec_native = None

needs_native = pytest.mark.skipif(
    codec_native is None, reason="C core not built: run `python native/build_native.py`")
CODECS = [pytest.param(codec_python, id="python"),
          pytest.param(codec_native, id="native", marks=needs_native)]
BODIES = [b"", b"\x01", b"7bytes!", b"8 bytes!", b"nine byte", os.urandom(4096)]
FILE_ID = 0xA1B2C3D4


def reference_record(type_, flags, user_type, fid, record_id, tx_id, count, body) -> bytes:
    """The record as FORMAT.md describes it, packed with layout.RECORD_HEADER."""
    header = layout.RECORD_HEADER.pack(0, type_, flags, user_type, fid, len(body),
                                       record_id, tx_id, count, 0)
    crc = codec_python.crc32c(header[4:] + body)
    padded = header[4:] + body + bytes(layout.record_size(len(body)) - 40 - len(body))
    return struct.pack("<I", crc) + padded


@pytest.mark.parametrize("codec", CODECS)
def test_crc_check_value(codec):
    assert codec.crc32c(b"123456789") == 0xE3069283
    assert codec.crc32c(b"") == 0
    assert codec.crc32c(b"56789", codec.crc32c(b"1234")) == 0xE3069283


@needs_native
@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=30000), st.integers(0, 15))
def test_crc_agrees_at_every_length_and_alignment(data, skew):
    view = memoryview(data)[min(skew, len(data)):]
    assert codec_native.crc32c(view) == codec_python.crc32c(view)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("type_", sorted(layout.TYPE_NAMES))
@pytest.mark.parametrize("body", BODIES, ids=lambda b: f"{len(b)}B")
@pytest.mark.parametrize("flags", [0, layout.FLAG_LARGE], ids=["plain", "large"])
def test_encode_record_matches_the_layout_reference(codec, type_, body, flags):
    fields = (type_, flags, 0x1234, FILE_ID, 0x1122334455667788, 0x99AABBCCDDEEFF00, 7)
    buf = bytearray(b"\xee" * 8200)     # stale bytes must not leak into the padding
    end = codec.encode_record(buf, 8, *fields, body)
    expected = reference_record(*fields, body)
    assert end == 8 + len(expected)
    assert bytes(buf[8:end]) == expected
    assert buf[:8] == b"\xee" * 8 and buf[end:] == b"\xee" * (len(buf) - end)


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("body", BODIES + [os.urandom(600_000)], ids=lambda b: f"{len(b)}B")
def test_encode_record_with_the_body_already_in_place_matches_the_layout_reference(codec, body):
    # Records written alone (bigger than the write buffer) get their body put
    # right after the header first; the encoder must then neither copy over it
    # nor zero any of it, only add the header, CRC and padding.
    fields = (layout.ADD, 0, 9, FILE_ID, 42, 0, 0)
    buf = bytearray(b"\xee" * (layout.record_size(len(body)) + 16))
    buf[8 + 40:8 + 40 + len(body)] = body
    in_place = memoryview(buf)[8 + 40:8 + 40 + len(body)]
    end = codec.encode_record(buf, 8, *fields, in_place)
    in_place.release()
    assert bytes(buf[8:end]) == reference_record(*fields, body)


@needs_native
def test_both_codecs_scan_a_record_larger_than_the_write_buffer():
    body = os.urandom(3 << 20)                      # above the 490k default buffer
    for writer, reader in ((codec_native, codec_python), (codec_python, codec_native)):
        buf = bytearray(4096 + layout.record_size(len(body)) + 4096)
        end = writer.encode_record(buf, 4096, layout.ADD, 0, 0, FILE_ID, 1, 0, 0, body)
        result = reader.scan(buf, 4096, FILE_ID)
        assert (result.n, result.first_foreign, result.clean_end) == (1, -1, end)
        assert list(result.body_lens) == [len(body)]
        buf[end - 100] ^= 0xFF                       # a flip near its end
        damaged = reader.scan(buf, 4096, FILE_ID)
        assert (damaged.n, damaged.first_foreign, damaged.foreign_reason) == (0, 4096, "crc mismatch")


@needs_native
def test_each_codec_scans_the_others_output():
    for writer, reader in ((codec_native, codec_python), (codec_python, codec_native)):
        buf = bytearray(16384)
        pos = 4096
        for index, body in enumerate(BODIES):
            pos = writer.encode_record(buf, pos, index % 9 + 1, 0, index, FILE_ID, index + 1,
                                       0, 0, body)
        result = reader.scan(buf, 4096, FILE_ID)
        assert (result.n, result.first_foreign, result.clean_end) == (len(BODIES), -1, pos)
        assert list(result.body_lens) == [len(b) for b in BODIES]
        assert list(result.record_ids) == list(range(1, len(BODIES) + 1))


def scan_fields(result):
    return (result.n, result.n_clean, result.clean_end, result.first_foreign,
            result.foreign_reason, result.scan_end,
            *(list(getattr(result, name)) for name in (
                "types", "flags", "user_types", "body_lens", "counts", "record_ids",
                "tx_ids", "offsets")))


@needs_native
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["record", "stale", "zeros", "junk"]),
                          st.binary(max_size=120)), max_size=12),
       st.integers(0, 7), st.booleans())
def test_both_codecs_scan_damaged_files_identically(pieces, cut, verify):
    buf = bytearray()
    for kind, body in pieces:
        if kind in ("record", "stale"):
            start = len(buf)
            buf += bytes(layout.record_size(len(body)))
            codec_python.encode_record(buf, start, 1 + len(body) % 9, 0, 3,
                                       FILE_ID if kind == "record" else 5, 9, 0, 0, body)
        elif kind == "zeros":
            buf += bytes(8 * (1 + len(body)))
        else:
            buf += body + bytes(-len(body) % 8)
    data = bytes(buf[:max(len(buf) - cut, 0)])
    assert (scan_fields(codec_native.scan(data, 0, FILE_ID, verify))
            == scan_fields(codec_python.scan(data, 0, FILE_ID, verify)))


def test_c_header_states_the_same_numbers_as_layout_py():
    header = open(os.path.join(os.path.dirname(__file__), "..", "native", "sj_format.h")).read()
    defines = dict(re.findall(r"#define (SJ_\w+) (\w+)", header))
    enums = dict(re.findall(r"SJ_(\w+) = (\d+)", header))
    assert int(defines["SJ_RECORD_HEADER_SIZE"]) == layout.RECORD_HEADER_SIZE
    assert int(defines["SJ_FILE_HEADER_SIZE"]) == layout.FILE_HEADER_SIZE
    assert int(defines["SJ_RECORD_ALIGN"]) == layout.RECORD_ALIGN
    assert int(defines["SJ_FORMAT_VERSION"]) == layout.FORMAT_VERSION
    assert int(defines["SJ_FLAG_LARGE"], 0) == layout.FLAG_LARGE
    assert {name: int(code) for name, code in enums.items()} == layout.TYPE_BY_NAME
    offsets = [int(defines[f"SJ_OFF_{name}"]) for name in (
        "CRC", "TYPE", "FLAGS", "USER_TYPE", "FILE_ID", "BODY_LEN", "RECORD_ID", "TX_ID",
        "COUNT", "COMPACT_COUNT")]
    sizes = [struct.calcsize("<" + code) for code in layout.RECORD_HEADER.format[1:]]
    assert offsets == [sum(sizes[:i]) for i in range(len(sizes))]


def test_environment_forces_the_python_codec(monkeypatch):
    monkeypatch.setenv("SPARKJOURNAL_CODEC", "python")
    assert load_codec().CODEC_NAME == "python"
    monkeypatch.delenv("SPARKJOURNAL_CODEC")
    assert load_codec().CODEC_NAME == ("native" if codec_native else "python")
