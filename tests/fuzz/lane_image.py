"""A whole lane folder as one fuzz input, and back.

An image is an options byte followed by entries ``[kind u8][length u16][bytes]``
(a length past the end takes what is left). The low 4 bits of kind say which
file the bytes are (``KINDS``); bit 7 fixes up the CRCs first (data files:
header and records; compact.ctl: its crc32c field); bit 6 leaves a data file
at the length given instead of zero-filling it to the size its header states
(the wrong-size path). Data files are stored without their trailing zeros, so
a seed stays small. A large body's bytes start with its 8-byte large id.
"""
from __future__ import annotations

import json
import os
import struct

from tests.fuzz.common import CRC, fix_header_crc, fix_record_crcs, layout

MAX_FILE = 256 << 10
KINDS = {
    0: "data-0000000001.sjd", 1: "data-0000000002.sjd", 2: "data-0000000003.sjd",
    3: "data-0000000004.sjd", 4: "data-0000000001.sjd.cmp", 5: "data-0000000002.sjd.cmp",
    6: "compact.ctl", 7: "files.gen", 8: "large", 9: "data-0000000005.sjd.tmp",
    10: "requests",
}
FIX_CRC, KEEP_SIZE = 0x80, 0x40
_ENTRY = struct.Struct("<BH")


def entries(data: bytes):
    """(kind, bytes) of each entry of an image (after the options byte)."""
    pos = 1
    while pos + _ENTRY.size <= len(data):
        kind, length = _ENTRY.unpack_from(data, pos)
        pos += _ENTRY.size
        yield kind, data[pos:pos + length]
        pos += length


def fix_control_crc(raw: bytes) -> bytes:
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    if not isinstance(body, dict):
        return raw
    body.pop("crc32c", None)
    try:
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    except (TypeError, ValueError):
        return raw
    return json.dumps({**body, "crc32c": CRC(canonical)}, sort_keys=True).encode()


def _data_file(kind: int, raw: bytes) -> bytes:
    content = bytearray(raw)
    if kind & FIX_CRC:
        fix_header_crc(content)
        fix_record_crcs(content, layout.FILE_HEADER_SIZE)
    if not kind & KEEP_SIZE and len(content) >= 32:
        size = int.from_bytes(content[24:32], "little")
        if len(content) < size <= MAX_FILE:
            content += bytes(size - len(content))
    return bytes(content)


def write_lane(data: bytes, lane: str) -> None:
    """Creates the files of an image in the (existing, empty) folder lane."""
    for kind, raw in entries(data):
        name = KINDS.get(kind & 0x0F)
        if name is None:
            continue
        if name.endswith((".sjd", ".cmp", ".tmp")):
            raw = _data_file(kind, raw)
        elif name == "compact.ctl" and kind & FIX_CRC:
            raw = fix_control_crc(raw)
        elif name == "large":
            os.makedirs(os.path.join(lane, "large"), exist_ok=True)
            name = os.path.join("large", f"{int.from_bytes(raw[:8], 'little'):016x}.body")
            raw = raw[8:]
        elif name == "requests":
            os.makedirs(os.path.join(lane, "requests"), exist_ok=True)
            name = os.path.join("requests", f"{len(os.listdir(os.path.join(lane, 'requests'))):020d}-fuzz.json")
        with open(os.path.join(lane, name), "wb") as handle:
            handle.write(raw)


def read_lane(lane: str, options: int = 0) -> bytes:
    """The image of a lane folder (the seed corpus is made this way)."""
    out = bytearray([options])
    by_name = {name: kind for kind, name in KINDS.items()}
    for name in sorted(os.listdir(lane)):
        path = os.path.join(lane, name)
        if name in ("large", "requests"):
            for inner in sorted(os.listdir(path)):
                with open(os.path.join(path, inner), "rb") as handle:
                    raw = handle.read()
                if name == "large":
                    raw = int(inner.split(".")[0], 16).to_bytes(8, "little") + raw
                out += _ENTRY.pack(by_name[name], len(raw)) + raw
            continue
        if name not in by_name:
            continue
        with open(path, "rb") as handle:
            raw = handle.read().rstrip(b"\0")
        if len(raw) > 0xFFFF:
            raise ValueError(f"{path}: {len(raw)} bytes of data do not fit an image entry")
        out += _ENTRY.pack(by_name[name], len(raw)) + raw
    return bytes(out)
