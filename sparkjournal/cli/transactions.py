"""``sparkjournal transactions PATH``: the batches whose prepared transactions
the commit log has not decided (events/undecided.py), found in the lanes of
PATH visible from this host, and the abort entries no replay has passed yet.
``--hanging AGE`` lists only batches undecided longer than AGE. Read-only.

On a cluster each host holds its own lanes: run it on every host (or where
the roots are mounted) to see every lane of a batch."""
from __future__ import annotations

import json
import sys
import time

from ..errors import UsageError
from ..events.commit_log import default_log_uri
from ..events.resolve import shared_log
from ..events.undecided import undecided_batches
from ..units import AGE_UNITS, human_bytes, quantity


def hanging_seconds(text: str | None) -> float | None:
    if text is None:
        return None
    seconds = quantity(text, AGE_UNITS)
    if seconds is None:
        raise UsageError(f"--hanging {text!r} is not an age: give a number and s, min, h, d or w "
                         f"(30min, 2h)")
    return seconds


def age_text(seconds: float | None) -> str:
    if seconds is None:
        return "age unknown (prepared by an older writer)"
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


def find(path: str, log_uri: str | None, hanging_s: float | None, now_ms: int) -> dict:
    batches = undecided_batches(path)
    if hanging_s is not None:
        batches = [b for b in batches if (b.age_s(now_ms) or 0) >= hanging_s]
    state = shared_log(log_uri or default_log_uri(path))
    aborted = [{"query": d.query, "batch": d.batch, "epoch": d.epoch,
                "aborted_at_ms": d.committed_at_ms}
               for d in state.view(refresh=True).aborted()]
    return {"path": path, "commit_log": state.log.uri, "now_ms": now_ms,
            "undecided": [b.to_json(now_ms) for b in batches], "aborted_waiting": aborted}


def text(found: dict) -> str:
    lines = []
    for batch in found["undecided"]:
        lines.append(f"batch {batch['batch']} of query {batch['query']} (epoch {batch['epoch']}): "
                     f"undecided for {age_text(batch['age_s'])}; {batch['rows']:,} rows, "
                     f"{human_bytes(batch['bytes'])} in {len(batch['lanes'])} lanes; holds back "
                     f"{batch['held_back_events']:,} committed events from streams")
        for tx in batch["lanes"]:
            lines.append(f"  host {tx['node'].rsplit('@', 1)[-1]}  node {tx['node']}  "
                         f"{tx['lane_dir']}  tx {tx['tx']}: {tx['rows']:,} rows, "
                         f"{tx['held_back']:,} events held back")
    if not found["undecided"]:
        lines.append(f"no undecided batch in the lanes of {found['path']} visible from here")
    else:
        lines.append("A batch is decided when its query runs it again (restart the query from its "
                     "checkpoint). If it will not return: sparkjournal abort PATH --query Q "
                     "--batch N")
    for entry in found["aborted_waiting"]:
        lines.append(f"batch {entry['batch']} of query {entry['query']}: aborted (epoch "
                     f"{entry['epoch']}); its query writes it again when it replays it")
    return "\n".join(lines)


def run(args) -> int:
    now_ms = int(time.time() * 1000)
    found = find(args.path, args.commit_log, hanging_seconds(args.hanging), now_ms)
    if args.json:
        json.dump(found, sys.stdout, indent=2)
        print()
    else:
        print(text(found))
    return 0
