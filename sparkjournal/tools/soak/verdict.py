"""The soak's verdict: every generated event exactly once, in each place.

The soak also deletes events while it runs (every id with id % 4 == 3, in rounds,
the last after the writer drained), so compaction has dead data to drop. The
journal and the batch reader apply deletes: they must hold exactly the events
not deleted. The streaming reader's Parquet copy must hold those exactly once
too, plus any deleted event it read before its delete, at most once.

Generated means every event of every batch the commit log decided: batch b of the
writer holds ids b*rows .. b*rows+rows-1, and decided batches must run 0..B without
a gap (a batch Spark planned but nobody committed was not generated yet: the next
start replays it). Each place - the journal read without Spark, the batch reader,
the streaming reader's Parquet output - must hold exactly those ids, each once.
"""
from __future__ import annotations

import dataclasses
from collections import Counter

from ...events.commit_log import default_log_uri
from ...events.log_state import LogState
from ...events.visible_events import read_table
from .writer_child import QUERY


DELETE_PREDICATE = "id % 4 = 3"


def deleted(event_id: int) -> bool:
    """Whether the soak deleted this event by its end (DELETE_PREDICATE)."""
    return event_id % 4 == 3


def delete_predicate(below: int) -> str:
    return f"{DELETE_PREDICATE} AND id < {below}"


@dataclasses.dataclass
class PlaceVerdict:
    place: str
    events: int
    missing: int
    duplicated: int
    unexpected: int
    deleted_seen: int = 0     # deleted events a stream copy read before their delete

    @property
    def ok(self) -> bool:
        return not (self.missing or self.duplicated or self.unexpected)

    def line(self) -> str:
        state = "every event exactly once" if self.ok else "FAILED"
        seen = f" ({self.deleted_seen:,} read before their delete)" if self.deleted_seen else ""
        return (f"{self.place}: {self.events:,} events{seen}, {self.missing:,} missing, "
                f"{self.duplicated:,} duplicated, {self.unexpected:,} unexpected - {state}")


def decided_count(root: str) -> int:
    """Decided batches of the soak's writer (the commit log's view)."""
    return LogState(default_log_uri(root)).view(refresh=True).decided_count(QUERY)


def generated_events(root: str, rows: int) -> int:
    """How many events the decided batches generated; raises if they have a gap
    (the commit log's view: its checkpoints count the batches retention deleted)."""
    view = LogState(default_log_uri(root)).view()
    decided, last = view.decided_count(QUERY), view.last_committed(QUERY)
    if decided != last + 1:
        raise AssertionError(f"the commit log holds {decided} decided batches up to batch "
                             f"{last}: a lost batch")
    return decided * rows


def judge(place: str, ids, generated: int, *, stream_copy: bool = False) -> PlaceVerdict:
    """``stream_copy``: the place copied events as they came, so a deleted event
    may be there (once) if it was read before its delete."""
    counts = Counter(ids)
    missing = sum(1 for i in range(generated) if not deleted(i) and i not in counts)
    duplicated = sum(n - 1 for n in counts.values() if n > 1)
    unexpected = sum(1 for i in counts
                     if not 0 <= i < generated or (deleted(i) and not stream_copy))
    seen = sum(1 for i in counts if 0 <= i < generated and deleted(i)) if stream_copy else 0
    return PlaceVerdict(place, sum(counts.values()), missing, duplicated, unexpected, seen)


def journal_ids(root: str) -> list[int]:
    table = read_table(root)
    return [] if table is None else table.column("id").to_pylist()


def spark_ids(frame) -> list[int]:
    return frame.select("id").toArrow().column("id").to_pylist()
