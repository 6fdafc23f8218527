"""``sparkjournal commit-log PATH``: what the commit log holds - its newest
checkpoint and its age, the entries on disk and how many are past the
checkpoint, each writer's last decided batch, the lanes and nodes it names -
and, with ``--checkpoint``, a checkpoint and retention now (what the driver
and the maintenance job do on their own). ``--json`` for scripts."""
from __future__ import annotations

import json
import time

from ..config import load_config
from ..events.commit_log import CommitLog, default_log_uri
from ..events.log_state import LogState
from ..events.log_view import CHECKPOINTS
from ..format.constants import PATHS
from ..maintenance.log_checkpointer import maintain
from ..units import human_bytes
from .compact import options_of


def describe(uri: str) -> dict:
    state = LogState(uri)
    view = state.view()
    log = state.log
    entries = sum(len([i for i in log.list_names(f"{log.base}/{q}")
                       if i.base_name.endswith(".json")]) for q in log.queries())
    sizes = {folder: sum(i.size or 0 for i in _walk(log, f"{log.base}/{folder}"))
             for folder in (PATHS.CHECKPOINTS, PATHS.TIMES)}
    entry_bytes = sum(i.size or 0 for q in log.queries()
                      for i in log.list_names(f"{log.base}/{q}"))
    checkpoint = view.checkpoint
    now = checkpoint.with_entries(view.entries)
    writers = [{"query": query, "last_batch": state.through, "decided": state.decided,
                "rows": state.rows, "last_committed_at_ms": state.last_committed_at_ms}
               for query, state in sorted(now.queries.items())]
    return {"uri": uri, "checkpoint": view.checkpoint_name,
            "checkpoint_written_at_ms": checkpoint.written_at_ms if checkpoint.seq >= 0 else None,
            "entries_on_disk": entries, "entries_past_checkpoint": sum(map(len, view.entries.values())),
            "bytes": {"entries": entry_bytes, "checkpoints": sizes[PATHS.CHECKPOINTS],
                      "commit_times": sizes[PATHS.TIMES]},
            "lanes": len(checkpoint.lanes), "nodes": len(checkpoint.nodes), "writers": writers}


def _walk(log: CommitLog, folder: str):
    for info in log.list_names(folder):
        if info.is_file:
            yield info
        else:
            yield from _walk(log, info.path)


def text(found: dict, now_ms: float) -> str:
    def ago(ms):
        return "never" if not ms else f"{(now_ms - ms) / 1e3:,.0f} s ago"
    lines = [f"commit log {found['uri']}"]
    if found["checkpoint"]:
        lines.append(f"  checkpoint {CHECKPOINTS}/{found['checkpoint']}, written "
                     f"{ago(found['checkpoint_written_at_ms'])}; names {found['lanes']} lanes "
                     f"on {found['nodes']} nodes")
    else:
        lines.append("  no checkpoint yet: every entry is read (the driver checkpoints every "
                     "commitLogCheckpointInterval decided batches; --checkpoint does it now)")
    sizes = found["bytes"]
    lines.append(f"  entries on disk: {found['entries_on_disk']:,} ({human_bytes(sizes['entries'])}),"
                 f" {found['entries_past_checkpoint']:,} past the checkpoint; checkpoints "
                 f"{human_bytes(sizes['checkpoints'])}, commit times "
                 f"{human_bytes(sizes['commit_times'])}")
    for writer in found["writers"]:
        lines.append(f"  writer {writer['query']}: last batch {writer['last_batch']:,}, "
                     f"{writer['decided']:,} batches and {writer['rows']:,} rows decided, last "
                     f"{ago(writer['last_committed_at_ms'])}")
    return "\n".join(lines)


def run(args) -> int:
    uri = args.commit_log or default_log_uri(args.path)
    if args.checkpoint:
        print(maintain(CommitLog(uri), load_config(options_of(args.option))).line())
    found = describe(uri)
    print(json.dumps(found, indent=1) if args.json else text(found, time.time() * 1000))
    return 0
