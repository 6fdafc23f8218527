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

MAGIC = "sparkjournal-2pc"


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
        return json.dumps({"kind": MAGIC, **dataclasses.asdict(self)}, sort_keys=True).encode()

    @classmethod
    def decode(cls, raw: bytes) -> "BatchXid | None":
        """The XID's fields, or None when the XID was not written by this sink."""
        try:
            data = json.loads(bytes(raw))
            if not isinstance(data, dict) or data.get("kind") != MAGIC:
                return None
            return cls(str(data["log"]), str(data["query"]), int(data["batch"]),
                       int(data.get("partition", -1)), int(data.get("attempt", 0)),
                       int(data.get("task", -1)), int(data.get("epoch", 0)),
                       int(data.get("prepared_at_ms", 0)))
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None
