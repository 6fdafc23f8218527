"""The byte layout of FORMAT.md as Python constants and struct formats.

native/sj_format.h states the same numbers for C; tests/test_format_agreement.py
checks the two against each other byte for byte.
"""
from __future__ import annotations

import struct

FORMAT_VERSION = 2           # 2: the header gained the id watermark (FORMAT.md); 1 is still read

# --- data file header -------------------------------------------------------
FILE_MAGIC = b"SJRNLDAT"
FILE_HEADER_SIZE = 4096
# magic, version, user version, file id, file size, block size, sealed end / 8
# (0: a file appended to), sync window, created ns, previous file id, previous
# file's end of data, highest record id and highest tx id handed out before
# this file's first record (the id watermark)
FILE_HEADER = struct.Struct("<8sIIQQIIQQQQQQ")
FILE_HEADER_CRC_AT = FILE_HEADER.size  # 88: CRC-32C of bytes 0..87
assert FILE_HEADER_CRC_AT == 88
# Version 1 headers: the same fields without the watermark, CRC at 72.
FILE_HEADER_V1 = struct.Struct("<8sIIQQIIQQQQ")
FILE_HEADER_V1_CRC_AT = FILE_HEADER_V1.size
assert FILE_HEADER_V1_CRC_AT == 72
FILE_SIZE_MULTIPLE = 4096

# --- record -------------------------------------------------------------------
RECORD_HEADER_SIZE = 40
# crc, type, flags, user type, file id, body length, record id, tx id, count,
# compact count
RECORD_HEADER = struct.Struct("<IBBHIIQQII")
assert RECORD_HEADER.size == RECORD_HEADER_SIZE
RECORD_ALIGN = 8

ADD = 1
UPDATE = 2
DELETE = 3
ADD_TX = 4
UPDATE_TX = 5
DELETE_TX = 6
PREPARE = 7
COMMIT = 8
ROLLBACK = 9

TYPE_NAMES = {
    ADD: "ADD", UPDATE: "UPDATE", DELETE: "DELETE",
    ADD_TX: "ADD_TX", UPDATE_TX: "UPDATE_TX", DELETE_TX: "DELETE_TX",
    PREPARE: "PREPARE", COMMIT: "COMMIT", ROLLBACK: "ROLLBACK",
}
TYPE_BY_NAME = {name: code for code, name in TYPE_NAMES.items()}
DATA_TYPES = frozenset((ADD, UPDATE, DELETE, ADD_TX, UPDATE_TX, DELETE_TX))
TX_DATA_TYPES = frozenset((ADD_TX, UPDATE_TX, DELETE_TX))
TX_CONTROL_TYPES = frozenset((PREPARE, COMMIT, ROLLBACK))
# The non-transactional type a transactional record becomes once committed.
PLAIN_TYPE = {ADD_TX: ADD, UPDATE_TX: UPDATE, DELETE_TX: DELETE,
              ADD: ADD, UPDATE: UPDATE, DELETE: DELETE}

FLAG_LARGE = 0x01
KNOWN_FLAGS = FLAG_LARGE

# --- large record reference -------------------------------------------------------
# large id, body size, body crc, reserved
LARGE_REF = struct.Struct("<QQII")
assert LARGE_REF.size == 24


def align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def record_size(body_len: int) -> int:
    """Bytes a record with a body of ``body_len`` occupies, padding included."""
    return align_up(RECORD_HEADER_SIZE + body_len, RECORD_ALIGN)


def file_id32(file_id: int) -> int:
    """The file id as records carry it."""
    return file_id & 0xFFFFFFFF
