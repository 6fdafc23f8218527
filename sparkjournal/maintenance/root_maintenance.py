"""Maintenance of every lane under a journal path that this machine holds,
without Spark: what ``sparkjournal compact PATH`` runs on one node.

Lanes of a node root (a root with a NODE_ID, written by the sink) hold events:
each gets the full pass (lane_maintenance.py: retention, sweep, compaction with
deletion vectors applied). A plain journal (lanes without a node root, written
through the Journal API) is only compacted.
"""
from __future__ import annotations

import os

from ..config import JournalConfig
from ..events.commit_log import default_log_uri
from ..events.visible_events import node_lanes
from ..io.modes import use_config_modes
from ..journal.lanes import list_lanes
from .compactor import compact_lane
from .lane_maintenance import LaneReport, maintain_lane, run_steps


def lanes_under(path: str) -> list[tuple[str, str | None]]:
    """(lane folder, node id or None) of every lane under ``path``: the lanes of
    its node roots, else of a plain journal root, else ``path`` itself if it is
    a lane."""
    found = list(node_lanes(path))
    if found and any(node for _lane, node in found):
        return found
    lanes = list_lanes(path)
    return [(lane, None) for lane in lanes] if lanes else [(path, None)]


def maintain_path(path: str, config: JournalConfig, *, log_uri: str | None = None,
                  force: bool = False, progress=None, lane_pass=maintain_lane) -> list[LaneReport]:
    """``lane_pass`` (maintain_lane, or page_pass for paging alone) over every
    lane of events under ``path``; lanes of a plain journal are only compacted,
    and never paged (they hold no events)."""
    lanes = lanes_under(path)
    for lane, _node in lanes:              # what maintenance creates gets the journal's modes
        use_config_modes(lane, config)
    log_uri = log_uri or default_log_uri(path)
    reports = []
    for number, (lane, node) in enumerate(lanes, 1):
        if node is not None:
            report = lane_pass(lane, node, log_uri, config, force=force)
        elif lane_pass is not maintain_lane:
            report = LaneReport(lane, None, error="not a lane of events (no NODE_ID in its "
                                "root): only lanes the sink wrote are paged")
        else:                              # a plain journal: compaction only
            report = run_steps(lane, None, lambda r: setattr(
                r, "compaction", compact_lane(lane, config, force=force)))
        reports.append(report)
        if progress is not None:
            progress(f"[{number}/{len(lanes)}] {report.line()}")
    return reports


def summary(reports: list[dict]) -> dict:
    """Totals of a pass over lanes (each ``dataclasses.asdict`` of a LaneReport,
    as the Spark job's tasks return them), for the last line and the JSON."""
    def compaction(r):
        return r.get("compaction") or {}
    done = [compaction(r) for r in reports if compaction(r).get("compacted")]
    return {
        "lanes": len(reports),
        "failed": [r["lane"] for r in reports if r.get("error")],
        "compacted_lanes": len(done),
        "files_before": sum(compaction(r).get("files_before", 0) for r in reports),
        "files_after": sum(compaction(r).get("files_after" if compaction(r).get("compacted")
                                             else "files_before", 0) for r in reports),
        "bytes_reclaimed": sum(c["bytes_before"] - c["bytes_after"] for c in done),
        "records_expired": sum((r.get("retention") or {}).get("records", 0) for r in reports),
        "requests_done": sum(r.get("requests_done", 0) for r in reports),
        "requests_pending": sum(r.get("requests_pending", 0) for r in reports),
        "prepared_resolved": sum(r.get("committed", 0) + r.get("rolled_back", 0) for r in reports),
        **paging_totals(reports),
        "seconds": round(sum(r.get("seconds", 0.0) for r in reports), 3),
    }


def paging_totals(reports: list[dict]) -> dict:
    pages = [r.get("paging") or {} for r in reports]
    return {
        "paged_lanes": sum(1 for p in pages if p.get("paged")),
        "records_paged": sum(p.get("records_paged", 0) for p in pages),
        "rows_paged": sum(p.get("rows_paged", 0) for p in pages),
        "pages_written": sum(p.get("pages_written", 0) for p in pages),
        "pages_pending": sum(p.get("pages_pending", 0) for p in pages),
        "orphan_pages_removed": sum(p.get("orphans_removed", 0) for p in pages),
        "pages_dropped": sum(p.get("pages_dropped", 0) for p in pages),
        "page_files_before": sum(p.get("pages_before", 0) for p in pages),
        "page_files_after": sum(p.get("pages_after", 0) for p in pages),
        "paging_files_before": sum(p.get("files_before", 0) for p in pages),
        "paging_files_after": sum(p.get("files_after", 0) for p in pages),
        "paging_bytes_reclaimed": sum(max(0, p.get("bytes_before", 0) - p.get("bytes_after", 0))
                                      for p in pages),
    }


def summary_line(totals: dict) -> str:
    return (f"{totals['lanes']} lanes: {totals['compacted_lanes']} compacted, files "
            f"{totals['files_before']} -> {totals['files_after']}, {totals['bytes_reclaimed']} "
            f"bytes reclaimed, {totals['records_expired']} stored records past retention, "
            f"{totals['requests_done']} requests carried out ({totals['requests_pending']} left to "
            f"live writers), {totals['prepared_resolved']} prepared transactions resolved"
            + (f", {totals['records_paged']} records paged" if totals["records_paged"] else "")
            + (f", {totals['pages_dropped']} fully deleted pages dropped"
               if totals["pages_dropped"] else "")
            + f"; {totals['seconds']:.2f}s" + _failed(totals))


def page_summary_line(totals: dict) -> str:
    return (f"{totals['lanes']} lanes: {totals['paged_lanes']} paged, {totals['records_paged']} "
            f"records ({totals['rows_paged']} rows) into {totals['pages_written']} page files "
            f"({totals['pages_pending']} left to live writers), page files "
            f"{totals['page_files_before']} -> {totals['page_files_after']}, data files "
            f"{totals['paging_files_before']} -> {totals['paging_files_after']}, "
            f"{totals['paging_bytes_reclaimed']} bytes reclaimed, "
            f"{totals['pages_dropped']} fully deleted pages dropped, "
            f"{totals['orphan_pages_removed']} orphan page files removed; "
            f"{totals['seconds']:.2f}s" + _failed(totals))


def _failed(totals: dict) -> str:
    return f"; FAILED: {', '.join(totals['failed'])}" if totals["failed"] else ""
