"""``sparkjournal compact PATH``: one maintenance pass over the lanes this node
holds, without Spark (root_maintenance.py): retention, the sweep of lanes no
writer holds, and online compaction. Prints a line per lane as it goes and the
totals; ``--json FILE`` writes every report. Exit 1 if any lane failed.
"""
from __future__ import annotations

import dataclasses
import json
import os

from ..config import load_config
from ..errors import UsageError
from ..events.commit_log import CommitLog, default_log_uri
from ..maintenance.lane_maintenance import maintain_lane
from ..maintenance.log_checkpointer import maintain
from ..maintenance.root_maintenance import maintain_path, summary, summary_line


def options_of(pairs: list[str]) -> dict:
    """``--option key=value`` pairs as journal options (validated by load_config)."""
    options = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--option takes key=value (such as retention=7d), got {pair!r}")
        options[key.strip()] = value.strip()
    return options


def run(args) -> int:
    return run_pass(args, maintain_lane, summary_line)


def maintain_commit_log(path: str, log_uri: str | None, config) -> dict:
    """The commit log's checkpoint and retention (maintenance/log_checkpointer.py),
    where this process reaches the log: its line printed, its figures returned
    (nothing is done where the log has no entries here)."""
    report = maintain(CommitLog(log_uri or default_log_uri(path)), config)
    print(report.line(), flush=True)
    return dataclasses.asdict(report)


def run_pass(args, lane_pass, line) -> int:
    """``lane_pass`` over the lanes under ``args.path`` (root_maintenance.maintain_path);
    prints a line per lane and ``line(totals)``; exit 1 if any lane failed.
    ``sparkjournal compact`` and ``sparkjournal page`` (page.py) both run it."""
    if not os.path.isdir(args.path.split("{")[0].rstrip("/") or "/"):
        raise UsageError(f"{args.path} does not exist or is not a folder")
    config = load_config(options_of(args.option))
    reports = maintain_path(args.path, config, log_uri=args.commit_log, force=args.force,
                            progress=lambda text: print(text, flush=True), lane_pass=lane_pass)
    reports = [dataclasses.asdict(r) for r in reports]
    totals = summary(reports)
    if lane_pass is maintain_lane:
        totals["commit_log"] = maintain_commit_log(args.path, args.commit_log, config)
    print(line(totals))
    write_reports(args.json, totals, reports)
    return 1 if totals["failed"] else 0


def write_reports(path: str | None, totals: dict, reports: list[dict]) -> None:
    """``--json FILE``: the totals and every lane's report (the CLI's and the job's)."""
    if path:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"totals": totals, "lanes": reports}, handle, indent=1, default=str)
