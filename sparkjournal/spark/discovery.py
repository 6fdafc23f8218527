"""What each live executor's host holds under a journal path, asked of the
executors themselves: the driver's own disk is not the cluster's.

``survey(sc, path, wanted_nodes)`` runs one tiny task per live executor, placed
on that executor (``executor_<host>_<id>``). The task lists the node roots of
``path`` as its machine sees them (node.node_roots: placeholders as globs), each
root's NODE_ID and lane folders, and says which host name and executor it ran
on. A task Spark ran on another executor than asked (a preference is not a
guarantee) still reports truly where it ran; the executor it was meant for is
asked again in the next round. Rounds go on while a node in ``wanted_nodes``
(the nodes the commit log says hold committed data, forgotten ones left out)
is not found yet and executors that were not asked yet register, until the
placement wait ends: ``wait_s`` (the read option missingHostWait) from now,
or, while the application is young, Spark's registration wait
(``spark.scheduler.maxRegisteredResourcesWaitingTime``, 30s by default) from
its start. A host that has not come back by then is reported missing by the
caller (lane_plan.py), never skipped in silence.

Read-only: a survey task opens no lane and takes no lock.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import socket
import time

from ..events.node import executor_id, node_roots, read_node_id
from ..journal.lanes import list_lanes
from .located_rdd import located_rdd
from .placement import Cluster, Executor, executors_now, is_local

log = logging.getLogger("sparkjournal.discovery")
ROUNDS_WITHOUT_NEWS = 3           # survey rounds that place nothing new before giving up early
POLL_SECONDS = 0.5


@dataclasses.dataclass(frozen=True)
class SeenRoot:
    root: str                     # the root path as the executor's machine sees it
    node: str | None              # its NODE_ID (None: a root without one)
    lanes: tuple[str, ...]        # lane folder names


@dataclasses.dataclass(frozen=True)
class HostSurvey:
    executor: Executor            # the executor the task ran on, as the scheduler knows it
    host_name: str                # socket.gethostname() there
    roots: tuple[SeenRoot, ...]

    @property
    def nodes(self) -> frozenset:
        return frozenset(root.node for root in self.roots if root.node)


@dataclasses.dataclass
class ClusterView:
    cluster: Cluster
    surveys: list[HostSurvey]
    unsurveyed: list[Executor]    # live executors no survey task ran on
    waited_s: float = 0.0

    def holders(self, node: str) -> list[tuple[HostSurvey, SeenRoot]]:
        """Every (survey, root) in which an executor saw ``node``."""
        return [(survey, root) for survey in self.surveys for root in survey.roots
                if root.node == node]

    def host_names(self) -> set[str]:
        return {survey.host_name for survey in self.surveys}

    def every_executor_sees(self, nodes: set) -> bool:
        """Every surveyed executor saw exactly ``nodes`` (one machine,
        local-cluster, a shared mount): a file of any root may be opened by
        path from any executor."""
        return bool(self.surveys) and not self.unsurveyed and \
            all(survey.nodes == frozenset(nodes) for survey in self.surveys)


def survey(sc, path: str, wanted_nodes: set, wait_s: float = 5.0) -> ClusterView:
    """The cluster as its executors see ``path`` (module doc)."""
    started = time.monotonic()
    conf = sc._jsc.sc().conf()
    registering = conf.getTimeAsMs("spark.scheduler.maxRegisteredResourcesWaitingTime", "30s")
    young_for_s = (sc.startTime + registering) / 1e3 - time.time()
    deadline = started + max(wait_s, young_for_s)
    surveys: dict[str, HostSurvey] = {}            # by executor id
    quiet_rounds = 0
    while True:
        cluster = executors_now(sc)
        asked = [e for e in cluster.executors if e.id not in surveys]
        if asked:
            placed = [(json.dumps({"id": e.id, "host": e.host}), [f"executor_{e.host}_{e.id}"])
                      for e in asked]
            rdd = located_rdd(sc, placed)
            sc.setJobDescription(f"sparkjournal: which nodes of {path} {len(asked)} executors hold")
            try:
                raw = rdd.map(_survey_task(path)).collect()
            finally:
                sc.setJobDescription(None)
            found = [_parse(result, cluster, is_local(sc)) for result in raw]
            news = [s for s in found if s is not None and s.executor.id not in surveys]
            surveys.update((s.executor.id, s) for s in news)
            quiet_rounds = 0 if news else quiet_rounds + 1
        seen = set().union(*(s.nodes for s in surveys.values())) if surveys else set()
        missing = wanted_nodes - seen
        unsurveyed = [e for e in cluster.executors if e.id not in surveys]
        done = (not missing and not unsurveyed) or is_local(sc)
        if done or time.monotonic() >= deadline or (not missing and quiet_rounds >= ROUNDS_WITHOUT_NEWS):
            view = ClusterView(cluster, [surveys[e] for e in sorted(surveys)], unsurveyed,
                               time.monotonic() - started)
            log.info("surveyed %d executors in %.1fs: %s", len(view.surveys), view.waited_s,
                     "; ".join(f"{s.host_name} (executor {s.executor.id}): "
                               f"{', '.join(sorted(s.nodes)) or 'no node root'}"
                               for s in view.surveys))
            return view
        time.sleep(POLL_SECONDS)


def _survey_task(path: str):
    """What each survey task runs, on its executor: its machine's view of ``path``."""
    def run(description: str) -> str:
        roots = [{"root": root, "node": read_node_id(root),
                  "lanes": [os.path.basename(lane) for lane in list_lanes(root)]}
                 for root in node_roots(path)]
        return json.dumps({"asked": json.loads(description), "host_name": socket.gethostname(),
                           "executor": executor_id(), "roots": roots})
    return run


def _parse(raw: str, cluster: Cluster, local: bool) -> HostSurvey | None:
    """A survey task's answer, attributed to the executor it ran on; None when
    that cannot be told (it ran elsewhere than asked, on an executor that does
    not know its own id): the executor it was meant for is asked again."""
    answer = json.loads(raw)
    asked = Executor(answer["asked"]["id"], answer["asked"]["host"])
    ran_on = answer["executor"]
    known = next((e for e in cluster.executors if e.id == ran_on), None)
    if local or ran_on == asked.id:
        executor = asked
    elif known is not None:
        executor = known
    elif cluster.same_host(answer["host_name"], asked.host):
        executor = asked          # an executor that cannot tell its id, on the asked host
    else:
        return None
    roots = tuple(SeenRoot(r["root"], r["node"], tuple(r["lanes"])) for r in answer["roots"])
    return HostSurvey(executor, answer["host_name"], roots)
