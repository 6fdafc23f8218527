"""The codec seam: ``CODEC`` is the C codec when sparkjournal._sjnative is
built, else the pure-Python one. SPARKJOURNAL_CODEC=python forces Python
(tests do, to prove both agree); SPARKJOURNAL_CODEC=native makes a missing C
core an ImportError instead of a silent fallback.

Both modules expose the same API:
  CODEC_NAME                                   "native" | "python"
  crc32c(data, crc=0) -> int
  encode_record(buf, pos, type, flags, user_type, file_id32, record_id, tx_id,
                count, body) -> new pos          (ValueError if it does not fit;
                              body may be a view of buf[pos + 40:], already in place)
  encode_batch(buf, pos, type, user_type, file_id32, tx_id, record_ids, data,
               offsets, start=0, stop=None, offset_width=None, id_base=0)
      -> (new pos, written)   body i gets id record_ids + i - id_base (an int) or
                              record_ids[i - id_base] (a uint64 buffer)
  scan(buf, start, file_id32, verify_crc=True) -> ScanResult
  record_crc_ok(buf, pos, body_len) -> bool
                              does the record at pos (a scan found it, body_len
                              bytes of body) carry the CRC-32C of its bytes?
  copy_records(buf, pos, file_id32, src, src_offsets, index, types, counts=None)
      -> new pos              compaction's copy: records src_offsets[index[k]] of
                              src (a scanned file) re-encoded at pos as records of
                              file_id32 with type types[k], count counts[k] (or 0);
                              the tx id kept only for types >= ADD_TX. ValueError
                              if they do not fit or lie outside src
``encode_arrow`` below wraps encode_batch for a pyarrow binary/string array.
"""
from __future__ import annotations

import os
from types import ModuleType
from typing import Any

from .batch_args import arrow_columns

CODEC_ENV = "SPARKJOURNAL_CODEC"


def load_codec(choice: str | None = None) -> ModuleType:
    choice = (choice if choice is not None else os.environ.get(CODEC_ENV, "")).strip().lower()
    if choice == "python":
        from . import codec_python
        return codec_python
    try:
        from . import codec_native
        return codec_native
    except ImportError:
        if choice == "native":
            raise
        from . import codec_python
        return codec_python


CODEC = load_codec()


def encode_arrow(buf: Any, pos: int, type: int, user_type: int, file_id32: int, tx_id: int,
                 record_ids: Any, array: Any, start: int = 0, codec: ModuleType | None = None
                 ) -> tuple[int, int]:
    """Encodes array[start:] (a pyarrow binary/string/large_binary/large_string
    array; bodies are not copied) while it fits. record_ids is the id of
    array[0] (numbered upward) or a uint64 buffer with one id per array element.
    A null is an empty body. Returns (new pos, records written); after a flush,
    call again with start + written."""
    data, offsets, width, first, stop = arrow_columns(array)
    return (codec or CODEC).encode_batch(buf, pos, type, user_type, file_id32, tx_id,
                                         record_ids, data, offsets, first + start, stop,
                                         offset_width=width, id_base=first)
