"""Where Spark should run the task that reads a lane: the lane's Spark location
preferences, as ``RDD.getPreferredLocations`` strings, and the live executors
as the driver's scheduler knows them.

The executors that hold a node are those whose survey task saw its root
(discovery.py), so no host name has to match an address:

* The root's ``{executor}`` value names one of them: ``executor_<host>_<id>``
  (that executor first; after ``spark.locality.wait`` any executor on its
  host). An executor of that id elsewhere (ids restart with every application)
  is not preferred: its tasks would fail every attempt.
* Otherwise the hosts of all of them: ``<host>``.

These are preferences only. Correctness never depends on them: a task that
runs where the lane's root does not carry the lane's NODE_ID fails
(lane_scan.check_node) and Spark retries it.

``Cluster.same_host`` tells whether a host name (as a machine calls itself)
and an executor's host (as Spark advertises it, often an IP address) are one
machine: by equal names, name resolution, or - for executors on the driver's
own machine - the driver's pair of name and ``spark.driver.host``.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import re
import socket

from ..events.node import PLACEHOLDERS

DRIVER = "driver"


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


def is_local(sc) -> bool:
    return sc.master == "local" or sc.master.startswith("local[")


def executors_now(sc) -> Cluster:
    """The active executors from the driver's status store. In local mode the
    driver is the executor; elsewhere it runs no tasks."""
    found = []
    summaries = sc._jsc.sc().statusStore().executorList(True).iterator()
    while summaries.hasNext():
        summary = summaries.next()
        found.append(Executor(summary.id(), _host_of(summary.hostPort())))
    local = is_local(sc)
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


def lane_locations(template: str, root: str, holders: list[Executor]) -> list[str]:
    """The location preferences of the lanes of node root ``root``, given the
    live executors that saw the root's node (discovery.py)."""
    executor = placeholder_values(template, root).get("executor")
    named = [e for e in holders if e.id == executor]
    if named:
        return [f"executor_{e.host}_{e.id}" for e in named]
    return sorted({e.host for e in holders})
