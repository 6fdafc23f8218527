"""What a compaction keeps of a lane's records: the rule, and its two paths.

Replaying every record of the lane in log order with the loader's rules
(journal/loader.py ``replay``: a COMMIT applies only when its per-file count
matches), record i of a file is written, if its file is compacted, as

* its own type (ADD_TX, UPDATE_TX, DELETE_TX) when a transaction of its tx id
  is still open at the end (its COMMIT or ROLLBACK may follow in a newer file);
* PREPARE when that open transaction is prepared, and prepared in this file;
* ADD when it is the current version of a live record (ADD, UPDATE, ADD_TX,
  UPDATE_TX: a committed transaction's records are plain records now);
* and otherwise it goes (0): deletes, outcomes, superseded or rolled-back records.

``plan`` takes the C path (native/sj_compact.c, no Python per record) when the
C core is built and the codec is not forced to Python, else the Python path
(``plan_python``: the loader's own replay into a JournalState, then the rule).
They must agree, on damaged files too (tests/test_compaction_plan.py). A
transaction record out of order fails both with the loader's CorruptJournalError.
"""
from __future__ import annotations

import dataclasses
from array import array
from itertools import compress

from ..format import layout
from ..format.codec import CODEC
from ..journal.loader import out_of_order, replay, watermarks
from ..journal.state import V_FILE, V_OFFSET

try:
    from sparkjournal._sjnative import ffi, lib
except ImportError:                       # no C core: the Python path only
    ffi = lib = None

_OUT_OF_ORDER = {1: "transaction {} is prepared: it takes no more records",
                 2: "transaction {} is already prepared"}


@dataclasses.dataclass
class Plan:
    files: list                  # the loaded files (LoadedFile), in file id order
    out_types: list              # per file: bytes, one type (or 0) per data record
    max_record_id: int           # ids handed out: the replay's and the headers' watermarks
    max_tx_id: int

    def kept(self, position: int) -> tuple[list, bytes]:
        """(indices, types) of the records of files[position] a compaction keeps."""
        out = self.out_types[position]
        return array("I", compress(range(len(out)), out)), bytes(compress(out, out))

    def live_of_user_type(self, user_type: int):
        """(file, index) of every current version of user type ``user_type``."""
        for file, out in zip(self.files, self.out_types):
            user_types = file.scan.user_types
            for index, kept in enumerate(out):
                if kept == layout.ADD and user_types[index] == user_type:
                    yield file, index


def plan(files: list) -> Plan:
    native = lib is not None and CODEC.CODEC_NAME == "native"
    return plan_native(files) if native else plan_python(files)


def plan_python(files: list) -> Plan:
    state = replay(files)
    out_types = []
    for file in files:
        scan, fid, n = file.scan, file.file_id, file.n_data
        out = bytearray(n)
        columns = zip(scan.types[:n].tolist(), scan.record_ids[:n].tolist(),
                      scan.tx_ids[:n].tolist(), scan.offsets[:n].tolist())
        for index, (rtype, record_id, tx_id, offset) in enumerate(columns):
            if rtype in layout.TX_DATA_TYPES and tx_id in state.txs:
                out[index] = rtype
            elif rtype == layout.PREPARE:
                tx = state.txs.get(tx_id)
                if tx is not None and tx.prepared and tx.prepare_file == fid:
                    out[index] = rtype
            elif rtype in (layout.ADD, layout.UPDATE, layout.ADD_TX, layout.UPDATE_TX):
                version = state.live.get(record_id)
                if version is not None and version[V_FILE] == fid and version[V_OFFSET] == offset:
                    out[index] = layout.ADD
        out_types.append(bytes(out))
    return Plan(files, out_types, *watermarks(files, state.max_record_id, state.max_tx_id))


def _joined(files: list, column: str, size: int) -> bytes:
    return b"".join(memoryview(getattr(f.scan, column)).cast("B")[:f.n_data * size] for f in files)


def plan_native(files: list) -> Plan:
    starts = [0]
    for file in files:
        starts.append(starts[-1] + file.n_data)
    n = starts[-1]
    # The joined columns are locals: a pointer cast from them keeps nothing alive.
    types, record_ids = _joined(files, "types", 1), _joined(files, "record_ids", 8)
    tx_ids, counts = _joined(files, "tx_ids", 8), _joined(files, "counts", 4)
    out = ffi.new("uint8_t[]", max(n, 1))
    maxima, bad = ffi.new("uint64_t[2]"), ffi.new("uint64_t *")
    result = lib.sj_compact_plan(
        len(files), ffi.new("uint64_t[]", starts), types,
        ffi.cast("uint64_t *", ffi.from_buffer(record_ids)),
        ffi.cast("uint64_t *", ffi.from_buffer(tx_ids)),
        ffi.cast("uint32_t *", ffi.from_buffer(counts)), out, maxima, bad)
    if result == -1:
        raise MemoryError("planning the compaction")
    if result:
        at = bad[0]
        position = max(p for p in range(len(files)) if starts[p] <= at)
        file = files[position]
        tx_id = memoryview(tx_ids).cast("Q")[at]
        raise out_of_order(file.path, file.scan.offsets[at - starts[position]],
                           _OUT_OF_ORDER[result].format(tx_id))
    flat = ffi.buffer(out, n)
    out_types = [bytes(flat[starts[p]:starts[p + 1]]) for p in range(len(files))]
    return Plan(files, out_types, *watermarks(files, maxima[0], maxima[1]))
