"""Maintain a journal cluster-wide: one task per lane, each on the node that
holds the lane - retention, resolving and carrying out what lanes no writer
holds wait for, paging of lanes over their size limits, and online compaction
(sparkjournal/maintenance/lane_maintenance.py).

    spark-submit jobs/compact.py                                   # ./data/journal
    spark-submit jobs/compact.py --path /var/lib/sparkjournal/events --option retention=7d
    spark-submit jobs/compact.py --force --json /var/log/sparkjournal/compact.json

Idempotent: run it as often as you like (conf/ has a cron line and a systemd
timer for a nightly run); a second run right after the first finds nothing to
do. It prints a progress line while lanes are being done, a line per lane
(files before and after, bytes reclaimed, records past retention, requests and
prepared transactions resolved, time taken) and the totals. ``sparkjournal
compact PATH`` does the same for one node without Spark.

Exit status: 0 done; 1 a lane failed (its reason is printed; the other lanes
were still done) or Spark failed; 2 bad arguments (nothing was done).
"""
from __future__ import annotations

import sys

from sparkjournal.cli.maintenance_job import COMPACT, main

if __name__ == "__main__":
    sys.exit(main(COMPACT))
