"""What the Python data source readers may plan: only lanes the driver sees.

``spark.read.format("sparkjournal")`` and ``readStream`` are PySpark Python
data sources. Their partitions cannot carry preferred locations, so they plan
one partition per lane the driver sees (one machine, local-cluster, a shared
mount) and any executor may read it. On a cluster of separate hosts the driver
sees at most its own host's root: planning those lanes alone would return part
of the committed events without a word. So before planning, every lane the
commit log names must be among the lanes the driver sees; otherwise planning
fails, naming the unseen nodes and ``sparkjournal.read`` (the read that runs
each lane on its node). ``allowPartialRead=true`` plans what the driver sees
and logs exactly what it leaves out.
"""
from __future__ import annotations

import logging
import os
import socket

from ..errors import SparkJournalError
from ..events.committed_lanes import committed_lanes, describe_nodes, forgotten_events
from ..events.resolve import shared_log
from ..events.forgotten import quarantined
from ..events.visible_events import node_lanes

log = logging.getLogger("sparkjournal.read")


class DriverCannotSeeError(SparkJournalError):
    """A Python data source read on a driver that does not see every node root."""


def driver_lanes(path: str, log_uri: str, allow_partial: bool, reader: str):
    """[(lane folder, node id)] the driver sees under ``path``, once every lane
    holding committed events is among them (module doc)."""
    # The log first: a lane a decision names was written before the decision,
    # so a listing taken after it sees the lane (no race with a running sink).
    state = shared_log(log_uri)
    committed = committed_lanes(state)
    forgotten = state.view().forgotten
    seen = []
    for lane, node in node_lanes(path):
        if node in forgotten:
            quarantined(path, node, [socket.gethostname()])
        else:
            seen.append((lane, node))
    lost = forgotten_events(state)
    if lost.nodes:
        log.warning("%s", lost.line(path))
    reached = {(node, os.path.basename(lane)) for lane, node in seen}
    missing = [lane for key, lane in sorted(committed.items()) if key not in reached]
    if not missing:
        return seen
    unseen = describe_nodes(missing)
    if not allow_partial:
        raise DriverCannotSeeError(
            f"{reader} plans the lanes the driver sees, and this driver (host "
            f"{socket.gethostname()}) does not see {unseen}. On a cluster where each host "
            f"keeps its journal on its own disk, use sparkjournal.read(spark, {path!r}), which "
            f"runs each lane's task on the host that holds it; or pass allowPartialRead=true "
            f"to read only the lanes this driver sees")
    log.warning("PARTIAL READ of %s by %s: this driver does not see %s", path, reader, unseen)
    return seen
