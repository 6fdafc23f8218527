"""The byte layout of FORMAT.md as Python constants and struct formats.

The numbers come from their one declaration (constants.json, through
constants.py), which Java compiles from too; native/sj_format.h states them for
C (tests/test_constants.py proves it) and tests/test_format_agreement.py checks
the two codecs against each other byte for byte.
"""
from __future__ import annotations

import struct

from .constants import FORMAT, RECORD_FLAGS, RECORD_TYPES, magic

FORMAT_VERSION = FORMAT.FORMAT_VERSION   # 2: the header gained the id watermark (FORMAT.md); 1 is still read

# --- data file header -------------------------------------------------------
FILE_MAGIC = magic(FORMAT.FILE_MAGIC)
FILE_HEADER_SIZE = FORMAT.FILE_HEADER_SIZE
# magic, version, user version, file id, file size, block size, sealed end / 8
# (0: a file appended to), sync window, created ns, previous file id, previous
# file's end of data, highest record id and highest tx id handed out before
# this file's first record (the id watermark)
FILE_HEADER = struct.Struct("<8sIIQQIIQQQQQQ")
FILE_HEADER_CRC_AT = FILE_HEADER.size  # 88: CRC-32C of bytes 0..87
assert FILE_HEADER_CRC_AT == FORMAT.FILE_HEADER_CRC_AT
# Version 1 headers: the same fields without the watermark, CRC at 72.
FILE_HEADER_V1 = struct.Struct("<8sIIQQIIQQQQ")
FILE_HEADER_V1_CRC_AT = FILE_HEADER_V1.size
assert FILE_HEADER_V1_CRC_AT == FORMAT.FILE_HEADER_V1_CRC_AT
FILE_SIZE_MULTIPLE = FORMAT.FILE_SIZE_MULTIPLE

# --- record -------------------------------------------------------------------
RECORD_HEADER_SIZE = FORMAT.RECORD_HEADER_SIZE
# crc, type, flags, user type, file id, body length, record id, tx id, count,
# compact count
RECORD_HEADER = struct.Struct("<IBBHIIQQII")
assert RECORD_HEADER.size == RECORD_HEADER_SIZE
RECORD_ALIGN = FORMAT.RECORD_ALIGN

ADD = RECORD_TYPES.ADD
UPDATE = RECORD_TYPES.UPDATE
DELETE = RECORD_TYPES.DELETE
ADD_TX = RECORD_TYPES.ADD_TX
UPDATE_TX = RECORD_TYPES.UPDATE_TX
DELETE_TX = RECORD_TYPES.DELETE_TX
PREPARE = RECORD_TYPES.PREPARE
COMMIT = RECORD_TYPES.COMMIT
ROLLBACK = RECORD_TYPES.ROLLBACK

TYPE_NAMES = {code: name for name, code in RECORD_TYPES.items()}
TYPE_BY_NAME = dict(RECORD_TYPES)
DATA_TYPES = frozenset((ADD, UPDATE, DELETE, ADD_TX, UPDATE_TX, DELETE_TX))
TX_DATA_TYPES = frozenset((ADD_TX, UPDATE_TX, DELETE_TX))
TX_CONTROL_TYPES = frozenset((PREPARE, COMMIT, ROLLBACK))
# The non-transactional type a transactional record becomes once committed.
PLAIN_TYPE = {ADD_TX: ADD, UPDATE_TX: UPDATE, DELETE_TX: DELETE,
              ADD: ADD, UPDATE: UPDATE, DELETE: DELETE}

FLAG_LARGE = RECORD_FLAGS.FLAG_LARGE
KNOWN_FLAGS = FLAG_LARGE

# --- large record reference -------------------------------------------------------
# large id, body size, body crc, reserved
LARGE_REF = struct.Struct("<QQII")
assert LARGE_REF.size == FORMAT.LARGE_REF_SIZE


def align_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def record_size(body_len: int) -> int:
    """Bytes a record with a body of ``body_len`` occupies, padding included."""
    return align_up(RECORD_HEADER_SIZE + body_len, RECORD_ALIGN)


def file_id32(file_id: int) -> int:
    """The file id as records carry it."""
    return file_id & 0xFFFFFFFF
