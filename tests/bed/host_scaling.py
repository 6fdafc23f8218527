"""Batch latency of the exactly-once sink with 1, 2 and 3 hosts, on the bed.

    python tests/bed/host_scaling.py [--batches 20] [--rows 1000] [--json F]

Starts a 3-host bed (cluster_bed.py) and, for k = 1, 2, 3, runs a foreachBatch
stream from the edge with ``spark.cores.max=k`` (one executor per host, one core
each) and k partitions per batch, so every batch has one task on each of k
hosts. For each k it prints the median micro-batch time (Spark's
triggerExecution), the median time of the Spark job whose tasks write and
prepare the batch's lanes, the median time of the batch's commit-log write, and the
commit log's own count of writes and transactions per batch: the claim under
test is that a batch costs one commit-log write whatever the number of hosts,
whose decision lists one transaction per task. All k run in one bed, in turn,
so the figures share the machine's state; the first batch of each run (Python
workers starting) is left out of the medians.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bed.cluster_bed import ClusterBed, unshare_unavailable  # noqa: E402

DRIVER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bed_driver.py")


def measure(bed: ClusterBed, hosts: int, batches: int, rows: int) -> dict:
    from sparkjournal.events.commit_log import CommitLog
    journal = f"scale{hosts}"
    steps = [{"do": "stream", "batches": batches, "rows": rows, "partitions": hosts,
              "query": journal}]
    argv = [sys.executable, DRIVER, "--journal", journal, "--steps", json.dumps(steps),
            "--conf", f"spark.cores.max={hosts}"]
    result = bed.run_driver(argv, timeout=900)
    line = next((x for x in result.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"the driver for {hosts} hosts failed: {result.stderr[-3000:]}")
    stream = json.loads(line[len("RESULT "):])[0]
    if "error" in stream:
        raise SystemExit(f"the stream on {hosts} hosts failed: {stream['error']}")
    log = CommitLog(str(bed.shared / journal / "commits"))
    decisions = [log.decision(stream["query"], b) for b in stream["decided"]]
    steady = slice(1, None)
    return {"hosts": hosts, "batches": len(decisions),
            "median_batch_ms": statistics.median(stream["batch_ms"][steady]),
            "median_job_ms": statistics.median(stream["job_ms"][steady]),
            "median_commit_log_ms": statistics.median(stream["commit_log_ms"][steady]),
            "decision_files": len(log.batches(stream["query"])),
            "hosts_per_batch": statistics.median(len({t["host"] for t in d.txs}) for d in decisions),
            "txs_per_decision": statistics.median(len(d.txs) for d in decisions)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--json", help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    reason = unshare_unavailable()
    if reason:
        print(f"host_scaling: the bed cannot run here: {reason}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sj-scale-") as base:
        with ClusterBed(base, hosts=3).start() as bed:
            rows = [measure(bed, k, args.batches, args.rows) for k in (1, 2, 3)]
    print(f"{'hosts':>5} {'batches':>7} {'batch ms':>9} {'tasks ms':>9} {'commit log ms':>13} "
          f"{'log writes':>10} {'hosts/batch':>11} {'txs/decision':>12}")
    for row in rows:
        print(f"{row['hosts']:>5} {row['batches']:>7} {row['median_batch_ms']:>9.0f} "
              f"{row['median_job_ms']:>9.0f} "
              f"{row['median_commit_log_ms']:>13.2f} {row['decision_files']:>10} "
              f"{row['hosts_per_batch']:>11.0f} {row['txs_per_decision']:>12.0f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(rows, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
