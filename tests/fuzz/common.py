"""What every fuzz target shares: the contract, the CRC fix-up, guarded buffers.

The contract of a target: for any input, only sparkjournal's own documented
errors (``SparkJournalError`` and its subclasses, plus what a target's
function documents) may escape. Anything else - another exception, an
assertion of a property, a crash of the process, a hang, an allocation past the
limits the runner sets - is a finding: the target lets it propagate and
libFuzzer (through atheris) stops and writes the input as ``crash-*``.

Records and headers carry CRCs, which a byte mutator almost never gets right:
each target can *fix up* the CRCs of its input first (a bit of the input says
whether), so the mutations reach past the checksum into the fields behind it.
"""
from __future__ import annotations

import contextlib
import ctypes
import mmap
import os
import shutil
import struct
import sys
import tempfile

import atheris

with atheris.instrument_imports(include=["sparkjournal"]):
    from sparkjournal.errors import SparkJournalError
    from sparkjournal.format import layout
    from sparkjournal.format import codec_python
    from sparkjournal.format.codec import load_codec

PY = codec_python
try:
    NATIVE = load_codec("native")
except ImportError:        # no C core: both sides are the Python codec
    NATIVE = None
CRC = (NATIVE or PY).crc32c
_U32 = struct.Struct("<I")
# Temp folders go to memory when it is there: the loader target syncs files.
TMP_ROOT = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def fix_header_crc(buf: bytearray) -> None:
    """Makes the CRC of a file header block right for whatever its fields say."""
    if len(buf) < layout.FILE_HEADER_V1_CRC_AT + 4:
        return
    version = int.from_bytes(buf[8:12], "little")
    crc_at = layout.FILE_HEADER_V1_CRC_AT if version == 1 else layout.FILE_HEADER_CRC_AT
    if len(buf) >= crc_at + 4:
        _U32.pack_into(buf, crc_at, CRC(bytes(buf[:crc_at])))


def fix_record_crcs(buf: bytearray, start: int) -> None:
    """Walks buf from start as a scan would and rewrites the CRC of every
    record whose type, flags and length are plausible (others: 8-byte steps)."""
    pos, size = (start + 7) & ~7, len(buf)
    while pos + layout.RECORD_HEADER_SIZE <= size:
        rtype, flags = buf[pos + 4], buf[pos + 5]
        body_len = int.from_bytes(buf[pos + 12:pos + 16], "little")
        if 1 <= rtype <= layout.ROLLBACK and not flags & ~layout.KNOWN_FLAGS and \
                body_len <= size - pos - layout.RECORD_HEADER_SIZE:
            end = pos + layout.RECORD_HEADER_SIZE + body_len
            _U32.pack_into(buf, pos, CRC(bytes(buf[pos + 4:end])))
            pos += layout.record_size(body_len)
        else:
            pos += 8


def record_crc_ok(view, offset: int, file_id32: int) -> bool:
    """Is there a whole record of this file with a right CRC at offset?"""
    if offset < 0 or offset + layout.RECORD_HEADER_SIZE > len(view):
        return False
    crc, _t, _f, _u, fid, body_len = struct.unpack_from("<IBBHII", view, offset)
    end = offset + layout.RECORD_HEADER_SIZE + body_len
    return fid == file_id32 and end <= len(view) and CRC(bytes(view[offset + 4:end])) == crc


class GuardedBuffer:
    """Bytes placed so that they end exactly at an inaccessible page: a read
    one byte past the end (by the C core) is a SIGSEGV, not a silent read of
    the neighbouring heap. One mapping, reused for every input."""

    def __init__(self, capacity: int):
        page = mmap.PAGESIZE
        self.size = (capacity + page - 1) // page * page
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        addr = libc.mmap(None, self.size + page, mmap.PROT_READ | mmap.PROT_WRITE,
                         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap of the guarded buffer failed")
        if libc.mprotect(addr + self.size, page, 0) != 0:
            raise OSError(ctypes.get_errno(), "mprotect of the guard page failed")
        self.addr = addr

    def place(self, data: bytes) -> memoryview:
        """A writable view of a copy of data that ends at the guard page."""
        if len(data) > self.size:
            raise ValueError(f"{len(data)} bytes do not fit the guarded buffer of {self.size}")
        at = self.addr + self.size - len(data)
        array = (ctypes.c_ubyte * len(data)).from_address(at)
        ctypes.memmove(at, data, len(data))
        return memoryview(array).cast("B")


@contextlib.contextmanager
def temp_dir(prefix: str):
    path = tempfile.mkdtemp(prefix=prefix, dir=TMP_ROOT)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def allowed(*extra):
    """The errors a target may raise: SparkJournalError plus ``extra``."""
    return (SparkJournalError,) + extra


def run(test_one_input) -> None:
    """The atheris entry point of a target module (``python -m tests.fuzz.fuzz_x``
    with libFuzzer flags); a corpus file path alone re-runs that input."""
    args = sys.argv
    if len(args) == 2 and os.path.isfile(args[1]):
        with open(args[1], "rb") as handle:
            test_one_input(handle.read())
        print(f"{args[1]}: no finding")
        return
    atheris.Setup(args, test_one_input)
    atheris.Fuzz()
