"""``sparkjournal nodes PATH``: every node the commit log names - host, lanes,
committed batches and events, when a decision last named it, whether this
host holds its root - and forgotten ones. ``--forget NODE`` declares a node
gone for good (format/COMMIT_LOG.md, "Forgotten nodes") after printing what
reads will no longer return; ``--restore NODE`` brings it back. Both ask for
confirmation unless ``--yes``.

Forgetting loses data on purpose, and says how much: reads stop requiring
and waiting for the node, and report its events as forgotten; a root of it
that comes back stays out of reads until restored; writers refuse it."""
from __future__ import annotations

import json
import sys
import time

from ..errors import SparkJournalError, UsageError
from ..events import forgotten as forgotten_nodes
from ..events.commit_log import default_log_uri
from ..events.log_state import LogState
from ..events.node import node_roots, read_node_id
from ..units import human_bytes
from .abort import confirm
from .transactions import age_text


def describe(path: str, uri: str) -> dict:
    view = LogState(uri).view(refresh=True)
    state = view.checkpoint.with_entries(view.entries)
    here = {read_node_id(root): root for root in node_roots(path)}
    nodes = []
    for node in sorted(set(state.nodes) | set(view.forgotten)):
        counts = state.nodes.get(node)
        record = view.forgotten.get(node)
        nodes.append({
            "node": node, "host": node.rsplit("@", 1)[-1],
            "lanes": sorted(lane for (n, lane) in state.lanes if n == node),
            "roots": sorted({lane.root for (n, _l), lane in state.lanes.items() if n == node}),
            "batches": counts.batches if counts else 0, "events": counts.rows if counts else 0,
            "bytes": counts.bytes if counts else 0,
            "last_seen_ms": (counts.last_committed_at_ms or None) if counts else None,
            "root_on_this_host": here.get(node),
            "forgotten_at_ms": record.forgotten_at_ms if record else None})
    return {"path": path, "commit_log": uri, "nodes": nodes}


def text(found: dict, now_ms: int) -> str:
    lines = []
    for node in found["nodes"]:
        seen = node["last_seen_ms"]
        state = (f"FORGOTTEN {age_text((now_ms - node['forgotten_at_ms']) / 1e3)} ago"
                 if node["forgotten_at_ms"] else
                 f"root here: {node['root_on_this_host']}" if node["root_on_this_host"] else
                 "not on this host")
        lines.append(f"{node['node']}  host {node['host']}: {len(node['lanes'])} lanes, "
                     f"{node['batches']:,} batches, {node['events']:,} events "
                     f"({human_bytes(node['bytes'])}) committed; last seen "
                     f"{age_text((now_ms - seen) / 1e3) + ' ago' if seen else 'unknown'}; {state}")
    return "\n".join(lines) or f"the commit log {found['commit_log']} names no node yet"


def _forget(found: dict, uri: str, node: str, yes: bool) -> None:
    entry = next((n for n in found["nodes"] if n["node"] == node), None)
    if entry is None:
        raise UsageError(f"the commit log {uri} names no node {node!r}; `sparkjournal nodes "
                         f"{found['path']}` lists them")
    if entry["forgotten_at_ms"]:
        raise SparkJournalError(f"node {node} is already forgotten; nothing was changed")
    print(f"Forgetting node {node} (host {entry['host']}) loses {entry['batches']:,} committed "
          f"batches' share: {entry['events']:,} events, {human_bytes(entry['bytes'])}, in lanes "
          f"{', '.join(entry['lanes'])}. Reads will no longer require or return them, and say so.")
    confirm(f"Forget node {node}?", yes)
    record = forgotten_nodes.ForgottenNode(node, int(time.time() * 1000), entry["batches"],
                                           entry["events"], entry["bytes"], tuple(entry["lanes"]))
    if not forgotten_nodes.forget(LogState(uri).log, record):
        raise SparkJournalError(f"node {node} was forgotten by another command meanwhile")
    print(f"node {node} is forgotten; `sparkjournal nodes {found['path']} --restore {node}` "
          f"brings it back if its disk returns")


def _restore(found: dict, uri: str, node: str, yes: bool) -> None:
    confirm(f"Restore node {node}? Reads will require its lanes again.", yes)
    if not forgotten_nodes.restore(LogState(uri).log, node):
        raise SparkJournalError(f"node {node} is not forgotten; nothing was changed")
    print(f"node {node} is restored: reads require and read its lanes again")


def run(args) -> int:
    uri = args.commit_log or default_log_uri(args.path)
    found = describe(args.path, uri)
    if args.forget:
        _forget(found, uri, args.forget, args.yes)
    elif args.restore:
        _restore(found, uri, args.restore, args.yes)
    elif args.json:
        json.dump(found, sys.stdout, indent=2)
        print()
    else:
        print(text(found, int(time.time() * 1000)))
    return 0
