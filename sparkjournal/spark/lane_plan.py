"""The lanes a read or a maintenance job must reach, and where each one is:
planned from the commit log (which lanes hold committed batches,
events/committed_lanes.py) and from the live executors' survey (which host
holds which node root and lanes, discovery.py), never from the driver's disk.

    plan = plan_lanes(sc, path, log_uri, doing="reading")

Every lane an executor saw is in the plan, committed or not (maintenance must
reach lanes that hold only open or prepared transactions). Every lane the
commit log names must be among them: one that is not - its host has no live
executor after the placement wait, its root is gone, its root carries another
NODE_ID, its lane folder is missing - would be a silent hole in the result, so
planning fails with UnreachableNodesError naming the node, host, root, lanes
and committed batches. With ``allow_partial`` the plan goes on without them
and says exactly what it left out (``left_out``, ``left_out_line``), and the
caller reports it.
"""
from __future__ import annotations

import dataclasses
import logging
import os

from ..errors import SparkJournalError
from ..events.committed_lanes import (CommittedLane, ForgottenEvents, by_node, committed_lanes,
                                      describe_nodes, forgotten_events)
from ..events.forgotten import quarantined
from ..events.lane_scan import LaneSlice
from ..events.pruning import Predicate
from ..events.resolve import shared_log
from ..events.visible_events import node_lanes
from .discovery import ClusterView, survey
from .placement import lane_locations
from .reader import LanePartition

log = logging.getLogger("sparkjournal.plan")
PARTIAL_OPTION = "allowPartialRead"


class UnreachableNodesError(SparkJournalError):
    """Lanes that hold committed events cannot be reached: the read would miss them."""

    def __init__(self, path: str, doing: str, missing: list[CommittedLane], why: dict[str, str]):
        self.missing, self.why = missing, why
        nodes = len(by_node(missing))
        super().__init__(
            f"{doing} {path}: {nodes} node{'s' if nodes > 1 else ''} holding committed events "
            f"cannot be reached, so the result would silently lack their events: "
            f"{describe_nodes(missing, why)}. Bring the host back (a running Spark worker "
            f"with the root mounted at the same path) and retry, or pass "
            f"{PARTIAL_OPTION}=true to read the rest and get a report of what was left out")


@dataclasses.dataclass
class LanePlan:
    path: str
    log_uri: str
    lanes: list[LanePartition]             # every reachable lane, by node then lane
    locations: list[list[str]]             # each lane's location preferences
    left_out: list[CommittedLane]          # committed lanes not reachable (allow_partial only)
    why: dict[str, str]                    # node id -> why it was not reached
    shared_view: bool                      # the driver and every executor see every root
    view: ClusterView
    forgotten: ForgottenEvents = ForgottenEvents((), 0, 0)    # not read: nodes forgotten

    def left_out_line(self) -> str:
        if not self.left_out:
            return ""
        return (f"PARTIAL READ of {self.path}: left out {describe_nodes(self.left_out, self.why)}")


def plan_lanes(sc, path: str, log_uri: str, *, doing: str = "reading",
               allow_partial: bool = False, predicate: Predicate = Predicate(),
               skip_corrupt: bool = False, wait_s: float = 5.0) -> LanePlan:
    state = shared_log(log_uri)
    committed = committed_lanes(state)
    forgotten = state.view().forgotten
    view = survey(sc, path, {lane.node for lane in committed.values()}, wait_s)
    _check_node_ids(path, view)
    lanes, locations, reached = [], [], set()
    for node in sorted({n for survey_ in view.surveys for n in survey_.nodes}):
        if node in forgotten:
            quarantined(path, node, [h.host_name for h, _root in view.holders(node)])
            continue
        holders = view.holders(node)
        root = holders[0][1]
        executors = [survey_.executor for survey_, seen in holders if seen.root == root.root]
        for name in root.lanes:
            lanes.append(LanePartition(LaneSlice(os.path.join(root.root, name), node, log_uri,
                                                 predicate=predicate, skip_corrupt=skip_corrupt)))
            locations.append(lane_locations(path, root.root, executors))
            reached.add((node, name))
    missing = [lane for key, lane in sorted(committed.items()) if key not in reached]
    why = _why_unreached(missing, view)
    if missing and not allow_partial:
        raise UnreachableNodesError(path, doing, missing, why)
    if not lanes and not missing:
        hosts = ", ".join(sorted(view.host_names())) or "none"
        raise SparkJournalError(
            f"{doing} {path}: no lanes under it on any live executor's host (hosts surveyed: "
            f"{hosts}) and no committed batch in its commit log {log_uri}: check the path, its "
            f"{{host}}/{{executor}} placeholders and commitLog")
    driver_nodes = {node for _lane, node in node_lanes(path) if node}
    plan = LanePlan(path, log_uri, lanes, locations, missing, why,
                    bool(driver_nodes) and view.every_executor_sees(driver_nodes), view,
                    forgotten_events(state))
    if missing:
        log.warning("%s", plan.left_out_line())
    if plan.forgotten.nodes:
        log.warning("%s", plan.forgotten.line(path))
    return plan



def _check_node_ids(path: str, view: ClusterView) -> None:
    """A root holding lanes without a NODE_ID cannot be told from another node's
    root at the same path: refused before any task reads it."""
    unplaced = sorted({f"{root.root} on host {survey_.host_name}" for survey_ in view.surveys
                       for root in survey_.roots if root.node is None and root.lanes})
    if unplaced:
        raise SparkJournalError(
            f"node root(s) {', '.join(unplaced)} have no NODE_ID file, so the node holding "
            f"their lanes is unknown and a task cannot check it reads the right one; "
            f"restore the root's NODE_ID file, or read it with sparkjournal.read_table on "
            f"the machine holding it")


def _why_unreached(missing: list[CommittedLane], view: ClusterView) -> dict[str, str]:
    """node id -> what the survey found where the node should be."""
    why = {}
    for node, group in by_node(missing).items():
        host, root = group[0].host, group[0].root
        on_host = [survey_ for survey_ in view.surveys if survey_.host_name == host]
        at_root = [seen for survey_ in on_host for seen in survey_.roots if seen.root == root]
        if not on_host:
            why[node] = (f"no live executor on host {host} after waiting {view.waited_s:.0f}s; "
                         f"live executors run on {', '.join(sorted(view.host_names())) or 'no host'}")
        elif any(seen.node == node for seen in at_root):
            why[node] = f"its root on host {host} has no folder for these lanes"
        elif any(seen.node for seen in at_root):
            other = next(seen.node for seen in at_root if seen.node)
            why[node] = (f"the root at {root} on host {host} now carries NODE_ID {other}: it is "
                         f"another disk or was wiped")
        else:
            why[node] = f"host {host} is live but has no node root at {root}"
    return why
