"""Where Spark should run the task that reads a lane: the lane's Spark location
preferences, as ``RDD.getPreferredLocations`` strings.

* The root's ``{executor}`` value names a live executor on the node's host:
  ``executor_<host>_<id>`` (that executor first; after ``spark.locality.wait``
  any executor on its host). An executor of that id elsewhere (ids restart with
  every application) is not preferred: its tasks would fail every attempt.
* Otherwise the hosts of live executors on the node's host: ``<host>``.
* Otherwise the node's host name as NODE_ID has it. No live executor matches
  it, so the scheduler does not wait for it and the task may run anywhere; the
  task's own node check (locality.py) then decides.

"The node's host" is the host part of NODE_ID (``uuid@host``, the machine's
name) while the scheduler knows executors by the host Spark advertises (often an
IP address): they match by equal names, by name resolution, or - for executors on
the driver's own machine (local mode, local-cluster) - by the driver's pair of
name and ``spark.driver.host``.

These are preferences only, taken from the executors alive when the read is
planned. ``live_cluster`` first waits (at most
``spark.scheduler.maxRegisteredResourcesWaitingTime``, 30s by default) until
every lane's host has a live executor, since a job that reads first thing would
otherwise plan before its executors register; it does not wait for an executor
named by ``{executor}``, which may belong to an earlier application. Correctness
never depends on preferences: a task off its node fails.
"""
from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
import socket
import time

from ..events.node import PLACEHOLDERS

DRIVER = "driver"
log = logging.getLogger("sparkjournal.placement")


@dataclasses.dataclass(frozen=True)
class Executor:
    id: str
    host: str                 # as the scheduler knows it (often an IP address)


@dataclasses.dataclass(frozen=True)
class Cluster:
    executors: tuple[Executor, ...]       # the live ones that run tasks
    driver_name: str                      # the driver machine's host name
    driver_host: str                      # spark.driver.host: the same machine to Spark

    def same_host(self, node_host: str, executor_host: str) -> bool:
        if node_host == executor_host:
            return True
        if node_host == self.driver_name and executor_host == self.driver_host:
            return True
        return executor_host in _addresses(node_host) or node_host in _addresses(executor_host)


def live_cluster(sc, node_hosts: set[str]) -> Cluster:
    """The live executors, once every host in ``node_hosts`` has one or the
    resource waiting time has passed (the executors alive by then). Local mode
    does not wait: its one executor is the driver."""
    conf = sc._jsc.sc().conf()
    deadline = time.monotonic() + conf.getTimeAsMs(
        "spark.scheduler.maxRegisteredResourcesWaitingTime", "30s") / 1e3
    while True:
        cluster = _executors_now(sc)
        missing = sorted(h for h in node_hosts
                         if not any(cluster.same_host(h, e.host) for e in cluster.executors))
        if not missing or _is_local(sc):
            return cluster
        if time.monotonic() >= deadline:
            log.warning("no live executor on host(s) %s of the journal's nodes: their lanes' "
                        "tasks may run anywhere and fail their node check", ", ".join(missing))
            return cluster
        time.sleep(0.2)


def _is_local(sc) -> bool:
    return sc.master == "local" or sc.master.startswith("local[")


def _executors_now(sc) -> Cluster:
    """The active executors from the driver's status store. In local mode the
    driver is the executor; elsewhere it runs no tasks."""
    found = []
    summaries = sc._jsc.sc().statusStore().executorList(True).iterator()
    while summaries.hasNext():
        summary = summaries.next()
        found.append(Executor(summary.id(), _host_of(summary.hostPort())))
    local = _is_local(sc)
    return Cluster(tuple(e for e in found if (e.id == DRIVER) == local), socket.gethostname(),
                   sc.getConf().get("spark.driver.host", ""))


def _host_of(host_port: str) -> str:
    host = host_port.rpartition(":")[0] if ":" in host_port else host_port
    return host.strip("[]")


@functools.lru_cache(maxsize=256)
def _addresses(host: str) -> frozenset[str]:
    try:
        return frozenset(info[4][0] for info in socket.getaddrinfo(host, None))
    except OSError:
        return frozenset()


def placeholder_values(template: str, root: str) -> dict[str, str]:
    """{placeholder name: value} that turn the journal path ``template`` into
    the node root ``root``; empty if it holds none or does not match."""
    pattern = re.escape(os.path.abspath(template))
    for placeholder in PLACEHOLDERS:
        name, token = placeholder.strip("{}"), re.escape(placeholder)
        head, found, tail = pattern.partition(token)
        if found:
            pattern = f"{head}(?P<{name}>[^/]+){tail.replace(token, f'(?P={name})')}"
    match = re.fullmatch(pattern, root)
    return match.groupdict() if match else {}


def preferred_locations(template: str, root: str, node: str, cluster: Cluster) -> list[str]:
    """The location preferences of the lanes of node root ``root`` (node id ``node``)."""
    node_host = node.rpartition("@")[2]
    on_host = [e for e in cluster.executors if cluster.same_host(node_host, e.host)]
    executor = placeholder_values(template, root).get("executor")
    named = [e for e in on_host if e.id == executor]
    if named:
        return [f"executor_{e.host}_{e.id}" for e in named]
    return sorted({e.host for e in on_host}) or [node_host]
