"""A folder of small files (a commit log) as one fuzz input, and back.

An image is an options byte (unused so far) followed by entries
``[name length u8][name][length u16][bytes]`` (a length past the end takes what
is left). A name is a relative path of up to 4 parts of ``[A-Za-z0-9._@-]``
(no ``.`` or ``..``): a mutated name that is not one, or that would put a file
where a folder is (or a folder where a file is), is skipped, so every input
writes a folder inside the one given. The names are mutated too: a file
becomes a folder's, an entry an attempt, a checkpoint a times segment.
"""
from __future__ import annotations

import os
import re
import struct

_NAME = struct.Struct("<B")
_LENGTH = struct.Struct("<H")
_PART = re.compile(r"[A-Za-z0-9._@-]{1,120}")


def entries(data: bytes):
    """(name or None, bytes) of each entry of an image (after the options byte)."""
    pos = 1
    while pos + 1 <= len(data):
        name_len = data[pos]
        name = data[pos + 1:pos + 1 + name_len]
        pos += 1 + name_len
        if pos + 2 > len(data):
            return
        length = _LENGTH.unpack_from(data, pos)[0]
        pos += 2
        yield _name(name), data[pos:pos + length]
        pos += length


def _name(raw: bytes):
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        return None
    parts = text.split("/")
    if not 1 <= len(parts) <= 4 or any(not _PART.fullmatch(p) or p in (".", "..") for p in parts):
        return None
    return os.path.join(*parts)


def write_folder(data: bytes, folder: str) -> None:
    """Creates the files of an image in the (existing) folder."""
    for name, raw in entries(data):
        if name is None:
            continue
        path = os.path.join(folder, name)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            if os.path.isdir(path):
                continue
            with open(path, "wb") as handle:
                handle.write(raw)
        except (NotADirectoryError, FileExistsError, IsADirectoryError):
            continue


def read_folder(folder: str, options: int = 0) -> bytes:
    """The image of a folder (the seeds are made this way from tests/golden)."""
    out = bytearray([options])
    for where, dirs, names in sorted(os.walk(folder)):
        dirs.sort()
        for name in sorted(names):
            path = os.path.join(where, name)
            rel = os.path.relpath(path, folder).replace(os.sep, "/").encode("ascii")
            with open(path, "rb") as handle:
                raw = handle.read()
            if len(rel) > 255 or len(raw) > 0xFFFF:
                raise ValueError(f"{path} does not fit an image entry")
            out += _NAME.pack(len(rel)) + rel + _LENGTH.pack(len(raw)) + raw
    return bytes(out)
