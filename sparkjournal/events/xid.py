"""The XID a task's PREPARE carries: which batch of which query the transaction
belongs to and where that batch's decision will be written.

It makes every prepared transaction resolvable by whoever finds it (the next
task on the lane, the driver, a reader, a maintenance job) with nothing but the
lane itself: read the decision named here; committed iff it lists this tx (the rules,
with the epoch an abort adds, are format/COMMIT_LOG.md's).
JSON, never pickle; an XID that is not ours is left for its owner to resolve.
"""
from __future__ import annotations

import dataclasses
import json
import logging

from ..format import strict_json as sj
from ..format.constants import MAGICS, XID

log = logging.getLogger("sparkjournal.xid")
MAGIC = MAGICS.XID_KIND
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1      # partition, attempt, task: signed 64-bit
_REPORTED: set = set()                              # XIDs not of their shape, logged once


@dataclasses.dataclass(frozen=True)
class BatchXid:
    log: str            # commit log URI
    query: str
    batch: int
    partition: int = -1
    attempt: int = 0
    task: int = -1     # Spark's task attempt id (unique per application)
    epoch: int = 0     # the batch's write epoch (COMMIT_LOG.md: > 0 after an abort)
    prepared_at_ms: int = 0    # when the task prepared (0: not known); informational

    def encode(self) -> bytes:
        return json.dumps({XID.KIND: MAGIC, XID.LOG: self.log, XID.QUERY: self.query,
                           XID.BATCH: self.batch, XID.PARTITION: self.partition,
                           XID.ATTEMPT: self.attempt, XID.TASK: self.task, XID.EPOCH: self.epoch,
                           XID.PREPARED_AT_MS: self.prepared_at_ms}, sort_keys=True).encode()

    @classmethod
    def decode(cls, raw: bytes) -> "BatchXid | None":
        """The XID's fields, or None when the XID is not this sink's
        (COMMIT_LOG.md, "XIDs"): not JSON as JSON.md defines it, not an
        object, another ``kind``, or ``kind`` this sink's but the fields not
        of their types and ranges (EVENTS.md, "XIDs": ``batch``, ``epoch``,
        ``prepared_at_ms`` 0..2^63-1; ``partition``, ``attempt``, ``task``
        signed 64-bit). The last is logged once per XID: no writer
        of this format writes one, and its transaction is left prepared
        (invisible) like any other application's, never guessed at."""
        try:
            data = sj.loads(raw, "the XID")
        except sj.JsonRefused:
            return None
        if type(data) is not dict or data.get(XID.KIND) != MAGIC:
            return None
        try:
            return cls(sj.string(data, XID.LOG), sj.string(data, XID.QUERY),
                       sj.integer(data, XID.BATCH, 0, I64_MAX),
                       sj.integer(data, XID.PARTITION, I64_MIN, I64_MAX, -1),
                       sj.integer(data, XID.ATTEMPT, I64_MIN, I64_MAX, 0),
                       sj.integer(data, XID.TASK, I64_MIN, I64_MAX, -1),
                       sj.integer(data, XID.EPOCH, 0, I64_MAX, 0),
                       sj.integer(data, XID.PREPARED_AT_MS, 0, I64_MAX, 0))
        except sj.JsonRefused as error:
            _not_of_its_shape(bytes(raw), error)
            return None


def _not_of_its_shape(raw: bytes, error: sj.JsonRefused) -> None:
    if raw in _REPORTED:
        return
    if len(_REPORTED) > 1024:
        _REPORTED.clear()
    _REPORTED.add(raw)
    log.warning("a PREPARE's XID names kind %s but is not of its shape (%s): its transaction "
                "is left prepared, as another application's would be. XID: %s",
                MAGIC, error, raw[:200])
