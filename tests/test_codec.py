"""Scan and batch-encode scenarios of FORMAT.md, each proven on both codecs."""
from __future__ import annotations

import os
from array import array

import pyarrow as pa
import pytest

from sparkjournal.format import codec_python, layout
from sparkjournal.format.codec import encode_arrow

try:
    from sparkjournal.format import codec_native
except ImportError:
    codec_native = None

CODECS = [pytest.param(codec_python, id="python"),
          pytest.param(codec_native, id="native", marks=pytest.mark.skipif(
              codec_native is None, reason="C core not built: run `python native/build_native.py`"))]
START = layout.FILE_HEADER_SIZE
FID = 42


def new_file(size: int = 16384) -> bytearray:
    return bytearray(size)


def put(codec, buf, pos, body=b"body", fid=FID, record_id=1, type_=layout.ADD):
    return codec.encode_record(buf, pos, type_, 0, 0, fid, record_id, 0, 0, body)


@pytest.mark.parametrize("codec", CODECS)
def test_zero_file_has_no_records_and_no_damage(codec):
    result = codec.scan(bytes(10 << 20), START, FID)
    assert (result.n, result.first_foreign, result.foreign_reason) == (0, -1, "")
    assert (result.clean_end, result.scan_end) == (START, 10 << 20)


@pytest.mark.parametrize("codec", CODECS)
def test_zero_padding_is_skipped(codec):
    buf = new_file()
    first_end = put(codec, buf, START, b"a" * 13, record_id=1)
    second = first_end + 512 + 8                      # a padded write's zeros in between
    second_end = put(codec, buf, second, b"b" * 100, record_id=2)
    result = codec.scan(buf, START, FID)
    assert (result.n, result.n_clean, result.first_foreign) == (2, 2, -1)
    assert list(result.offsets) == [START, second]
    assert list(result.record_ids) == [1, 2]
    assert result.clean_end == second_end


@pytest.mark.parametrize("codec", CODECS)
def test_torn_record_is_foreign_at_its_offset(codec):
    buf = new_file()
    pos = put(codec, buf, START, record_id=1)
    torn_at = pos
    pos = put(codec, buf, pos, os.urandom(300), record_id=2)
    buf[torn_at + 200:pos] = bytes(pos - torn_at - 200)   # only the first sectors landed
    result = codec.scan(buf, START, FID)
    assert (result.n, result.n_clean, result.clean_end) == (1, 1, torn_at)
    assert (result.first_foreign, result.foreign_reason) == (torn_at, "crc mismatch")


@pytest.mark.parametrize("codec", CODECS)
def test_stale_record_of_other_file_id_is_foreign(codec):
    buf = new_file()
    stale_at = put(codec, buf, START, fid=FID, record_id=1)
    put(codec, buf, stale_at, fid=7, record_id=99)            # an earlier use of the file
    result = codec.scan(buf, START, FID)
    assert (result.n, result.first_foreign) == (1, stale_at)
    assert result.foreign_reason == "record of file id 7 (stale)"
    assert result.clean_end == stale_at


@pytest.mark.parametrize("codec", CODECS)
def test_records_after_damage_are_found(codec):
    buf = new_file()
    damage_at = put(codec, buf, START, record_id=1)
    buf[damage_at:damage_at + 64] = bytes([77]) * 64          # type byte 77: not a record
    later = put(codec, buf, damage_at + 64, b"x" * 33, record_id=2)
    last = put(codec, buf, later + 16, b"y", record_id=3)
    put(codec, buf, last, b"z", fid=8, record_id=4)            # stale: not found
    result = codec.scan(buf, START, FID)
    assert (result.n, result.n_clean) == (3, 1)
    assert (result.first_foreign, result.foreign_reason) == (damage_at, "bad type 77")
    assert list(result.offsets) == [START, damage_at + 64, later + 16]
    assert list(result.record_ids) == [1, 2, 3]
    assert result.clean_end == damage_at


@pytest.mark.parametrize("codec", CODECS)
def test_crc_mismatch_detected_for_every_flipped_byte(codec):
    body = b"0123456789"
    clean = new_file(8192)
    end = put(codec, clean, START, body)
    reasons = set()
    for at in range(START, START + 40 + len(body)):        # the bytes the CRC covers
        buf = bytearray(clean)
        buf[at] ^= 0x01
        result = codec.scan(buf, START, FID)
        assert (result.n, result.first_foreign) == (0, START), f"flip at {at - START}"
        reasons.add(result.foreign_reason.split(" ")[0])
    assert reasons <= {"crc", "bad", "body"}
    assert "crc" in reasons
    assert codec.scan(clean, START, FID).clean_end == end


@pytest.mark.parametrize("codec", CODECS)
def test_body_length_past_end_is_foreign(codec):
    buf = new_file(8192)
    put(codec, buf, START, b"short")
    buf[START + 12:START + 16] = (999999).to_bytes(4, "little")
    result = codec.scan(buf, START, FID)
    assert (result.n, result.first_foreign) == (0, START)
    assert result.foreign_reason == "body length 999999 past end of file"


@pytest.mark.parametrize("codec", CODECS)
def test_header_cut_off_by_end_of_buffer_is_foreign_and_not_overread(codec):
    buf = new_file(8192)
    put(codec, buf, START, b"abc")
    cut = bytes(buf[:START + 24])                          # header ends 16 bytes later
    result = codec.scan(cut, START, FID)
    assert (result.n, result.first_foreign) == (0, START)
    assert result.foreign_reason == "header cut off by end of file"
    assert result.scan_end == START + 24


@pytest.mark.parametrize("codec", CODECS)
def test_record_that_does_not_fit_or_is_misaligned_is_refused(codec):
    buf = bytearray(100)
    with pytest.raises(ValueError, match="does not fit"):
        put(codec, buf, 48, b"x" * 20)
    with pytest.raises(ValueError, match="aligned"):
        put(codec, buf, 4, b"")
    assert buf == bytearray(100)


def bodies_and_offsets(count: int):
    bodies = [os.urandom(n % 50) for n in range(count)]
    offsets = array("q", [0])
    for body in bodies:
        offsets.append(offsets[-1] + len(body))
    return bodies, b"".join(bodies), offsets


@pytest.mark.parametrize("codec", CODECS)
def test_batch_encode_matches_single_encodes(codec):
    bodies, data, offsets = bodies_and_offsets(40)
    batch, single = bytearray(8192), bytearray(8192)
    end, written = codec.encode_batch(batch, 8, layout.ADD_TX, 3, FID, 77, 1000, data, offsets)
    pos = 8
    for index, body in enumerate(bodies):
        pos = codec.encode_record(single, pos, layout.ADD_TX, 0, 3, FID, 1000 + index, 77, 0, body)
    assert (end, written) == (pos, 40)
    assert batch == single
    ids = array("Q", range(500, 540))
    by_list = bytearray(8192)
    codec.encode_batch(by_list, 8, layout.ADD_TX, 3, FID, 77, ids, data, offsets)
    assert codec.scan(by_list, 8, FID).record_ids.tolist() == list(range(500, 540))


@pytest.mark.parametrize("codec", CODECS)
def test_batch_stops_when_buffer_full(codec):
    bodies, data, offsets = bodies_and_offsets(30)
    sizes = [layout.record_size(len(b)) for b in bodies]
    buf = bytearray(sum(sizes[:10]) + sizes[10] - 8)        # record 10 misses by 8 bytes
    end, written = codec.encode_batch(buf, 0, layout.ADD, 0, FID, 0, 1, data, offsets)
    assert (end, written) == (sum(sizes[:10]), 10)
    rest = bytearray(4096)
    end2, written2 = codec.encode_batch(rest, 0, layout.ADD, 0, FID, 0, 1, data, offsets,
                                        start=written)
    assert written2 == 20
    found = codec.scan(rest, 0, FID)
    assert list(found.record_ids) == list(range(11, 31))       # ids continue after resuming
    assert found.clean_end == end2


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("kind", [pa.binary(), pa.large_binary(), pa.string()], ids=str)
def test_batch_accepts_arrow_binary_array(codec, kind):
    values = [os.urandom(n).hex() if kind == pa.string() else os.urandom(n) for n in range(25)]
    values[3] = None
    column = pa.array(values, kind).slice(5, 15)               # offset into shared buffers
    buf = bytearray(8192)
    end, written = encode_arrow(buf, 0, layout.ADD, 2, FID, 0, 100, column, codec=codec)
    expected, pos = bytearray(8192), 0
    for index, value in enumerate(column.to_pylist()):
        body = value.encode() if isinstance(value, str) else value
        pos = codec.encode_record(expected, pos, layout.ADD, 0, 2, FID, 100 + index, 0, 0, body)
    assert (end, written) == (pos, 15)
    assert buf == expected
    _validity, offsets, data = column.buffers()              # plain pyarrow.Buffer objects
    width = 8 if kind == pa.large_binary() else 4
    direct = bytearray(8192)
    codec.encode_batch(direct, 0, layout.ADD, 2, FID, 0, 95, data, offsets, start=5, stop=20,
                       offset_width=width)
    assert direct == expected


@pytest.mark.parametrize("codec", CODECS)
def test_untyped_offsets_without_width_are_refused(codec):
    with pytest.raises(ValueError, match="offset_width"):
        codec.encode_batch(bytearray(64), 0, 1, 0, FID, 0, 1, b"ab", b"\0" * 8)
