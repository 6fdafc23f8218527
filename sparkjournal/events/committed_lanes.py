"""Which lanes hold committed data, by the commit log alone: no node's disk.

Every decision names its transactions by node id, host, root and lane
(commit_log.py), so the union of all decisions of all queries is the set of
lanes a complete read must reach, each with the number of committed batches it
holds. A reader compares it with the lanes it can actually reach
(spark/lane_plan.py): a lane named here that no reachable node holds is data
the read would silently leave out, so the read fails instead (or, asked to,
reports exactly what it left out).

Conservative by construction: a lane whose committed events were all deleted
or expired since is still named (the commit log is never rewritten), so a lost
host holding only deleted events still fails a read until the read accepts a
partial result. Never the other way round: a batch with a decision is always
counted.

Cost: one listing per query and one read per decision not yet cached in this
process (decisions never change, commit_log.CommitLog caches them).
"""
from __future__ import annotations

import dataclasses

from .commit_log import CommitLog


@dataclasses.dataclass
class CommittedLane:
    node: str                      # uuid@host of the root that holds it
    host: str                      # the host the writing task ran on
    root: str                      # the root path as that host resolved it
    lane: str                      # the lane folder's name (lane-NNN)
    batches: set = dataclasses.field(default_factory=set)     # (query, batch id)

    @property
    def key(self) -> tuple[str, str]:
        return self.node, self.lane


def committed_lanes(log: CommitLog) -> dict[tuple[str, str], CommittedLane]:
    """{(node id, lane name): CommittedLane} of every lane a decision in ``log`` names."""
    found: dict[tuple[str, str], CommittedLane] = {}
    for query in log.queries():
        for batch in log.batches(query):
            decision = log.decision(query, batch)
            if decision is None:               # listed, then gone: not ours to judge here
                continue
            for tx in decision.txs:
                key = (tx["node"], tx["lane"])
                lane = found.get(key)
                if lane is None:
                    lane = found[key] = CommittedLane(
                        tx["node"], str(tx.get("host") or tx["node"].rpartition("@")[2]),
                        str(tx.get("root") or ""), tx["lane"])
                lane.batches.add((query, batch))
    return found


def by_node(lanes) -> dict[str, list[CommittedLane]]:
    """The lanes grouped by node id, each group in lane-name order."""
    grouped: dict[str, list[CommittedLane]] = {}
    for lane in sorted(lanes, key=lambda entry: (entry.node, entry.lane)):
        grouped.setdefault(lane.node, []).append(lane)
    return grouped


def describe_nodes(lanes, why: dict[str, str] | None = None) -> str:
    """One clause per node: its id, host, root, lanes and committed batch count
    (and ``why[node]`` if given), for errors and reports."""
    parts = []
    for node, group in by_node(lanes).items():
        batches = set().union(*(lane.batches for lane in group))
        reason = f" ({why[node]})" if why and node in why else ""
        parts.append(f"node {node} on host {group[0].host}{reason}: root {group[0].root}, "
                     f"lanes {', '.join(lane.lane for lane in group)}, holding "
                     f"{len(batches)} committed batches")
    return "; ".join(parts)
