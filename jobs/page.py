"""Page a journal cluster-wide: one task per lane, each on the node that holds
the lane - a lane over ``maxSizeBytes``, or whose node root is over
``maxRootSizeBytes`` (its biggest lanes first), moves its oldest events into
Parquet page files of about ``pageSizeBytes`` (sparkjournal/maintenance/paging.py).

    spark-submit jobs/page.py --path /var/lib/sparkjournal/events --option maxSizeBytes=20g
    spark-submit jobs/page.py --option maxRootSizeBytes=200g --option pageSizeBytes=64m
    spark-submit jobs/page.py --force --json /var/log/sparkjournal/page.json   # one page per lane

Idempotent: a run finds what is over a limit now; a second run right after the
first finds nothing to do, and records whose page waits for a lane's live
writer are never paged twice. It prints a progress line while lanes are being
done, a line per lane (records and rows paged, page files written, data files
before and after, bytes reclaimed, orphan page files removed, time taken) and
the totals. ``sparkjournal page PATH`` does the same for one node without Spark.

Exit status: 0 done; 1 a lane failed (its reason is printed; the other lanes
were still done) or Spark failed; 2 bad arguments (nothing was done).
"""
from __future__ import annotations

import sys

from sparkjournal.cli.maintenance_job import PAGE, main

if __name__ == "__main__":
    sys.exit(main(PAGE))
