"""``sparkjournal page PATH``: paging alone over the lanes this node holds,
without Spark (maintenance/paging.py): every lane over ``maxSizeBytes`` or whose
root is over ``maxRootSizeBytes`` (or every lane, with ``--force``: one page
each) moves its oldest events into Parquet page files. Prints a line per lane
and the totals; ``--json FILE`` writes every report. Exit 1 if any lane failed.
"""
from __future__ import annotations

from ..maintenance.lane_maintenance import page_pass
from ..maintenance.root_maintenance import page_summary_line
from .compact import run_pass


def run(args) -> int:
    return run_pass(args, page_pass, page_summary_line)
