"""``sparkjournal status PATH``: one screen on how a journal is, in a
person's terms - the nodes the commit log names and which of them this host
holds, the lanes here with their sizes and events (live, deleted, paged),
when each was last compacted and paged, undecided batches and their age, the
commit log's size and last checkpoint, damaged files - each with the command
that shows more or acts on it. ``--json`` for scripts. Read-only.

A cluster's lanes live on its hosts' own disks: run it on each host for that
host's lanes; what the commit log says (nodes, batches, undecided counts in
the log) is the same everywhere."""
from __future__ import annotations

import json
import sys
import time

from ..config import load_config
from ..events.commit_log import default_log_uri
from ..events.lane_summary import summarize_lane
from ..events.log_state import LogState
from ..events.node import node_roots, read_node_id
from ..events.undecided import undecided_batches
from ..events.visible_events import node_lanes
from ..units import human_bytes
from .commit_log_cmd import describe as describe_log
from .nodes import describe as describe_nodes
from .transactions import age_text


def gather(path: str, log_uri: str | None, now_ms: int) -> dict:
    uri = log_uri or default_log_uri(path)
    view = LogState(uri).view(refresh=True)
    here = {read_node_id(root): root for root in node_roots(path)}
    nodes = [{"node": n["node"], "host": n["host"], "lanes": len(n["lanes"]),
              "batches": n["batches"], "events_committed": n["events"],
              "on_this_host": n["root_on_this_host"] is not None}
             for n in describe_nodes(path, uri)["nodes"]]
    lanes = []
    for lane_dir, node in node_lanes(path):
        summary = summarize_lane(lane_dir, node, {})
        lanes.append(vars(summary))
    undecided = [b.to_json(now_ms) for b in undecided_batches(path)]
    return {"path": path, "now_ms": now_ms, "nodes": nodes,
            "roots_here": [{"node": n, "root": r} for n, r in sorted(here.items(), key=str)],
            "lanes": lanes,
            "events": {key: sum(lane[f"events_{key}"] for lane in lanes)
                       for key in ("live", "deleted", "paged")},
            "bytes_on_disk": sum(lane["bytes_on_disk"] for lane in lanes),
            "undecided": undecided, "aborted_waiting": len(view.aborted()),
            "commit_log": describe_log(uri),
            "damaged": [f"{lane['lane_dir']}/{d}" for lane in lanes for d in lane["damaged"]]}


def ago(ms: int | None, now_ms: int) -> str:
    return "never" if ms is None else f"{age_text((now_ms - ms) / 1e3)} ago"


def text(found: dict) -> str:
    now, path = found["now_ms"], found["path"]
    lines = [f"journal {path}"]
    lines.append(f"nodes        {len(found['nodes'])} named by the commit log; "
                 f"{len(found['roots_here'])} root(s) on this host")
    for node in found["nodes"]:
        lines.append(f"  {node['host']:<16} {node['lanes']} lanes, {node['batches']:,} batches, "
                     f"{node['events_committed']:,} events committed"
                     f"{'  (this host)' if node['on_this_host'] else ''}   node {node['node']}")
    lines.append(f"lanes here   {len(found['lanes'])}, {human_bytes(found['bytes_on_disk'])} on disk")
    for lane in found["lanes"]:
        lines.append(f"  {lane['lane_dir']}: {human_bytes(lane['bytes_on_disk'])}; events "
                     f"{lane['events_live']:,} live, {lane['events_deleted']:,} deleted, "
                     f"{lane['events_paged']:,} paged; compacted "
                     f"{ago(lane['last_compacted_ms'], now)}, paged {ago(lane['last_paged_ms'], now)}")
    events = found["events"]
    lines.append(f"events here  {events['live']:,} live, {events['deleted']:,} deleted (space not yet "
                 f"reclaimed), "
                 f"{events['paged']:,} paged")
    if found["undecided"]:
        lines.append(f"undecided    {len(found['undecided'])} batches (see `sparkjournal "
                     f"transactions {path}`)")
        for batch in found["undecided"]:
            lines.append(f"  batch {batch['batch']} of query {batch['query']}: "
                         f"{age_text(batch['age_s'])}, {batch['rows']:,} rows, holds back "
                         f"{batch['held_back_events']:,} events")
    else:
        lines.append("undecided    none")
    if found["aborted_waiting"]:
        lines.append(f"aborted      {found['aborted_waiting']} batches wait for their query "
                     f"to write them again")
    log = found["commit_log"]
    size = sum(log["bytes"].values())
    checkpoint = (f"last checkpoint {ago(log['checkpoint_written_at_ms'], now)}"
                  if log["checkpoint"] else "no checkpoint yet")
    lines.append(f"commit log   {human_bytes(size)}, {log['entries_on_disk']:,} entries, "
                 f"{checkpoint}; {len(log['writers'])} writers (`sparkjournal commit-log {path}`)")
    if found["damaged"]:
        lines.append(f"damaged      {len(found['damaged'])} files (run `sparkjournal verify "
                     f"{path}`):")
        lines += [f"  {entry}" for entry in found["damaged"]]
    else:
        lines.append("damaged      none")
    return "\n".join(lines)


def run(args) -> int:
    load_config()
    found = gather(args.path, args.commit_log, int(time.time() * 1000))
    if args.json:
        json.dump(found, sys.stdout, indent=2)
        print()
    else:
        print(text(found))
    return 1 if found["damaged"] else 0
