"""Which lanes hold committed data, by the commit log alone: no node's disk.

Every decision names its transactions by node id, host, root and lane
(commit_log.py), and a checkpoint keeps every lane its folded decisions named
(log_checkpoint.py), so the commit log's view (log_view.py) gives the set of
lanes a complete read must reach, each with the number of committed batches it
holds. A reader compares it with the lanes it can actually reach
(spark/lane_plan.py): a lane named here that no reachable node holds is data
the read would silently leave out, so the read fails instead (or, asked to,
reports exactly what it left out).

Conservative by construction: a lane whose committed events were all deleted
or expired since is still named, so a lost host holding only deleted events
still fails a read until the read accepts a partial result. Never the other
way round: a batch with a decision is always counted.

Cost: the view's refresh - a checkpoint parsed once, one listing per query, the
entries decided since the checkpoint - however old the log.
"""
from __future__ import annotations

import dataclasses

from .log_state import LogState


@dataclasses.dataclass
class CommittedLane:
    node: str                      # uuid@host of the root that holds it
    host: str                      # the host the writing task ran on
    root: str                      # the root path as that host resolved it
    lane: str                      # the lane folder's name (lane-NNN)
    batches: int = 0               # committed batches it holds
    node_batches: int = 0          # committed batches its node holds (each counted once)

    @property
    def key(self) -> tuple[str, str]:
        return self.node, self.lane


def committed_lanes(shared) -> dict[tuple[str, str], CommittedLane]:
    """{(node id, lane name): CommittedLane} of every lane the log's view names
    (``shared``: resolve.shared_log's LogState; the view is refreshed): its
    checkpoint with the entries after it folded in - but a forgotten node's
    lanes (forgotten.py), which no read requires."""
    view = shared.view(refresh=True) if isinstance(shared, LogState) else shared
    state = view.checkpoint.with_entries(view.entries)
    # A lane of a node the checkpoint does not list (a damaged one) counts no
    # batches of its node, as the JVM's CommittedLane.of counts it.
    return {key: CommittedLane(lane.node, lane.host, lane.root, lane.lane, lane.batches,
                               state.nodes[lane.node].batches if lane.node in state.nodes else 0)
            for key, lane in state.lanes.items() if lane.node not in view.forgotten}


@dataclasses.dataclass(frozen=True)
class ForgottenEvents:
    """What reads leave out because nodes were forgotten."""
    nodes: tuple[str, ...]
    batches: int                   # committed batches of those nodes (a batch once per node)
    events: int                    # committed rows of those nodes, by the commit log

    def line(self, path: str) -> str:
        return (f"{path}: {self.events:,} committed events of {len(self.nodes)} forgotten "
                f"node(s) ({', '.join(self.nodes)}) are not read (sparkjournal nodes --forget; "
                f"--restore brings a node back)") if self.nodes else ""


def forgotten_events(shared) -> ForgottenEvents:
    """The committed events the view credits to forgotten nodes."""
    view = shared.view() if isinstance(shared, LogState) else shared
    if not view.forgotten:
        return ForgottenEvents((), 0, 0)
    state = view.checkpoint.with_entries(view.entries)
    nodes = sorted(view.forgotten)
    counts = [state.nodes.get(node) for node in nodes]
    return ForgottenEvents(tuple(nodes), sum(c.batches for c in counts if c),
                           sum(c.rows for c in counts if c))


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
        batches = max(lane.node_batches for lane in group)
        reason = f" ({why[node]})" if why and node in why else ""
        parts.append(f"node {node} on host {group[0].host}{reason}: root {group[0].root}, "
                     f"lanes {', '.join(lane.lane for lane in group)}, holding "
                     f"{batches} committed batches")
    return "; ".join(parts)
