"""A commit log checkpoint: the live state folded from every entry up to a
batch per query (format/COMMIT_LOG.md, "Checkpoints").

Its size follows the live state - queries, lanes, nodes, and the holes in each
lane's committed tx ids (losing task attempts, maintenance transactions) -
never the number of batches decided: a lane's committed transactions are kept
as merged ranges of tx ids.

``parse`` checks everything a reader relies on and raises CheckpointDamage
(the reader falls back to the previous checkpoint) or FormatVersionError (a
newer sparkjournal wrote it: refused, never misread).
"""
from __future__ import annotations

import bisect
import dataclasses
import json

from ..config_keys import one_path_segment
from ..errors import FormatVersionError
from ..format import strict_json as sj
from ..format.constants import CHECKPOINT as CP, CHECKPOINT_LANE as LANE, \
    CHECKPOINT_NODE as NODE, CHECKPOINT_QUERY as QUERY, ENTRY_TX as TX
from .commit_log import CommitLogError, Decision

FORMAT = 1


class CheckpointDamage(CommitLogError):
    """A checkpoint that is not one this format defines."""


@dataclasses.dataclass
class QueryState:
    through: int                 # its highest decided batch folded
    decided: int = 0
    rows: int = 0
    last_committed_at_ms: int = 0


@dataclasses.dataclass
class LaneState:
    node: str
    host: str
    root: str
    lane: str
    batches: int = 0
    rows: int = 0
    committed: list = dataclasses.field(default_factory=list)    # [[first, last], ...]

    def commits(self, tx: int) -> bool:
        at = bisect.bisect_right(self.committed, [tx, 1 << 64]) - 1
        return at >= 0 and self.committed[at][0] <= tx <= self.committed[at][1]

    def add_tx(self, tx: int) -> None:
        ranges = self.committed
        at = bisect.bisect_left(ranges, [tx, tx])
        if at > 0 and ranges[at - 1][1] >= tx - 1:
            if ranges[at - 1][1] < tx:
                ranges[at - 1][1] = tx
            at -= 1
        elif at < len(ranges) and ranges[at][0] <= tx + 1:
            ranges[at][0] = min(ranges[at][0], tx)
        else:
            ranges.insert(at, [tx, tx])
        if at + 1 < len(ranges) and ranges[at + 1][0] <= ranges[at][1] + 1:   # closed a hole
            ranges[at][1] = max(ranges[at][1], ranges.pop(at + 1)[1])


@dataclasses.dataclass
class NodeState:
    batches: int = 0
    rows: int = 0
    bytes: int = 0                   # optional in the file (0: not known)
    last_committed_at_ms: int = 0    # its newest decided batch's time; optional (0: not known)


@dataclasses.dataclass
class Checkpoint:
    seq: int = -1                # -1: the empty state (no checkpoint yet)
    written_at_ms: int = 0
    queries: dict = dataclasses.field(default_factory=dict)    # query -> QueryState
    lanes: dict = dataclasses.field(default_factory=dict)      # (node, lane) -> LaneState
    nodes: dict = dataclasses.field(default_factory=dict)      # node -> NodeState

    def through(self, query: str) -> int:
        """The query's highest folded batch, -1 if none."""
        found = self.queries.get(query)
        return found.through if found is not None else -1

    def fold(self, decision: Decision) -> None:
        """Adds one committed batch past the query's ``through`` (callers fold a
        query's entries in batch order); an abort entry folds nothing
        (COMMIT_LOG.md: it stays in the view until a commit passes it)."""
        if decision.aborted:
            return
        state = self.queries.setdefault(decision.query, QueryState(-1))
        if decision.batch <= state.through:
            raise ValueError(f"batch {decision.batch} of {decision.query} is already folded")
        state.through, state.decided = decision.batch, state.decided + 1
        state.rows += decision.rows
        state.last_committed_at_ms = max(state.last_committed_at_ms, decision.committed_at_ms)
        lanes_counted, nodes_counted = set(), set()      # a batch counts once per lane, node
        for tx in decision.txs:
            key = (tx[TX.NODE], tx[TX.LANE])
            lane = self.lanes.get(key)
            if lane is None:
                lane = self.lanes[key] = LaneState(
                    tx[TX.NODE], tx.get(TX.HOST) or tx[TX.NODE].rpartition("@")[2],
                    tx.get(TX.ROOT) or "", tx[TX.LANE])
            rows = tx.get(TX.ROWS, 0)
            if key not in lanes_counted:
                lane.batches += 1
                lanes_counted.add(key)
            lane.rows += rows
            lane.add_tx(tx[TX.TX])
            node = self.nodes.setdefault(tx[TX.NODE], NodeState())
            node.rows += rows
            node.bytes += tx.get(TX.BYTES, 0)
            node.last_committed_at_ms = max(node.last_committed_at_ms, decision.committed_at_ms)
            if tx[TX.NODE] not in nodes_counted:
                node.batches += 1
                nodes_counted.add(tx[TX.NODE])

    def copy(self) -> "Checkpoint":
        """A copy to fold more entries into, this one left as it is."""
        return Checkpoint(
            self.seq, self.written_at_ms,
            {q: dataclasses.replace(s) for q, s in self.queries.items()},
            {k: dataclasses.replace(lane, committed=[list(r) for r in lane.committed])
             for k, lane in self.lanes.items()},
            {n: dataclasses.replace(s) for n, s in self.nodes.items()})

    def with_entries(self, entries: dict) -> "Checkpoint":
        """A copy with ``entries`` ({query: {batch: Decision}}, each past this
        checkpoint's ``through``) folded in, in query and batch order."""
        state = self.copy()
        for query in sorted(entries):
            for _batch, decision in sorted(entries[query].items()):
                state.fold(decision)
        return state

    def to_json(self) -> bytes:
        return json.dumps({
            CP.FORMAT: FORMAT, CP.SEQ: self.seq, CP.WRITTEN_AT_MS: self.written_at_ms,
            CP.QUERIES: [{QUERY.QUERY: q, QUERY.THROUGH: s.through, QUERY.DECIDED: s.decided,
                          QUERY.ROWS: s.rows, QUERY.LAST_COMMITTED_AT_MS: s.last_committed_at_ms}
                         for q, s in sorted(self.queries.items())],
            CP.LANES: [{LANE.NODE: lane.node, LANE.HOST: lane.host, LANE.ROOT: lane.root,
                        LANE.LANE: lane.lane, LANE.BATCHES: lane.batches, LANE.ROWS: lane.rows,
                        LANE.COMMITTED: [list(r) for r in lane.committed]}
                       for _, lane in sorted(self.lanes.items())],
            CP.NODES: [{NODE.NODE: n, NODE.BATCHES: s.batches, NODE.ROWS: s.rows,
                        NODE.BYTES: s.bytes, NODE.LAST_COMMITTED_AT_MS: s.last_committed_at_ms}
                       for n, s in sorted(self.nodes.items())],
        }, sort_keys=True, separators=(",", ":")).encode()


def parse(raw: bytes, where: str, seq: int | None = None) -> Checkpoint:
    """The checkpoint in ``raw`` (``seq``: the one its file name says), every
    check of COMMIT_LOG.md's "Reader requirement" passed: CheckpointDamage
    otherwise, FormatVersionError (before anything else) for a newer format."""
    try:
        data = sj.top_object(sj.loads(raw, "it"), "it")
    except sj.JsonRefused as error:
        raise CheckpointDamage(f"checkpoint {where} is not JSON ({error})") from error
    found = sj.newer_format(data, FORMAT)
    if found is not None:
        raise FormatVersionError(where, found, FORMAT, "commit log checkpoint")
    try:
        sj.format_of(data, FORMAT)
        made = Checkpoint(sj.whole(data, CP.SEQ), sj.whole(data, CP.WRITTEN_AT_MS))
        if seq is not None and made.seq != seq:
            raise sj.JsonRefused(f"seq {made.seq} in a file named for seq {seq}")
        for entry in _objects(data, CP.QUERIES):
            query = sj.string(entry, QUERY.QUERY)
            if not one_path_segment(query):
                raise sj.JsonRefused(f"query {sj.show(query)} cannot name a folder")
            made.queries[query] = QueryState(
                sj.whole(entry, QUERY.THROUGH), sj.whole(entry, QUERY.DECIDED),
                sj.whole(entry, QUERY.ROWS), sj.whole(entry, QUERY.LAST_COMMITTED_AT_MS))
        for entry in _objects(data, CP.LANES):
            ranges = sj.array(entry, LANE.COMMITTED)
            if not all(type(r) is list and len(r) == 2 and sj.is_integer(r[0]) and
                       sj.is_integer(r[1]) and r[0] <= r[1] for r in ranges):
                raise sj.JsonRefused("committed must be [first, last] pairs of integers, "
                                     "first <= last")
            if any(a[1] >= b[0] for a, b in zip(ranges, ranges[1:])):
                raise sj.JsonRefused("committed ranges must be sorted and disjoint")
            lane = LaneState(sj.string(entry, LANE.NODE), sj.string(entry, LANE.HOST),
                             sj.string(entry, LANE.ROOT), sj.string(entry, LANE.LANE),
                             sj.whole(entry, LANE.BATCHES), sj.whole(entry, LANE.ROWS),
                             [list(r) for r in ranges])
            made.lanes[(lane.node, lane.lane)] = lane
        for entry in _objects(data, CP.NODES):
            made.nodes[sj.string(entry, NODE.NODE)] = NodeState(
                sj.whole(entry, NODE.BATCHES), sj.whole(entry, NODE.ROWS),
                sj.whole(entry, NODE.BYTES, default=0),
                sj.whole(entry, NODE.LAST_COMMITTED_AT_MS, default=0))
        for name, keys in ((CP.QUERIES, list(made.queries)), (CP.LANES, list(made.lanes)),
                           (CP.NODES, list(made.nodes))):
            if len(keys) != len(data[name]) or keys != sorted(keys):
                raise sj.JsonRefused(f"{name} must be sorted without repeats")
        return made
    except sj.JsonRefused as error:
        raise CheckpointDamage(f"checkpoint {where} is damaged ({error})") from error


def _objects(entry: dict, key: str) -> list:
    """A list of objects (queries, lanes, nodes)."""
    value = sj.array(entry, key)
    for item in value:
        if type(item) is not dict:
            raise sj.JsonRefused(f"each of {key} must be an object, not {sj.show(item)}")
    return value
