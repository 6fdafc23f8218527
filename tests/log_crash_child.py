"""Child process of tests/test_commit_log_crash.py.

    python tests/log_crash_child.py write PATH UNTIL
        lands batches 0..UNTIL-1 of query "q" (10 events each, ids batch*10..)
        through the sink's own task writer and committer - skipping those
        already done, as Spark's replay does - with a checkpoint every 3
        decided batches and retention keeping 2 entries, no age; prints DONE
    python tests/log_crash_child.py read PATH STOP_FILE
        plans and reads the journal until STOP_FILE exists; every read must
        hold each batch it shows whole and no event twice; prints READS <n>

SPARKJOURNAL_CRASH_AT kills the writer at a crash point (faults.py).
"""
from __future__ import annotations

import os
import sys

import pyarrow as pa

ROWS = 10
QUERY = "q"
OPTIONS = {"commitLogCheckpointInterval": 3, "commitLogRetainBatches": 2,
           "commitLogRetainTime": "0s"}


def write(path: str, until: int) -> None:
    from sparkjournal.spark.committer import BatchCommitter, BatchMetrics
    from sparkjournal.spark.lane_writer import WritePlan, write_task
    committer = BatchCommitter(path, OPTIONS)
    options = tuple(sorted((k, str(v)) for k, v in OPTIONS.items()))
    for batch in range(until):
        if committer.is_committed(QUERY, batch):
            continue
        events = pa.table({"id": pa.array(range(batch * ROWS, (batch + 1) * ROWS), pa.int64())})
        plan = WritePlan(path, options, committer.log_uri, QUERY, batch,
                         committer.log.log_id(create=True))
        committer.check_schema(events.schema, f"batch {batch}")
        message = write_task(iter(events.to_batches()), plan)
        committer.commit(QUERY, batch, [message], BatchMetrics(QUERY, batch))
    committer.checkpointer.wait()
    print("DONE", flush=True)


def check_read(table) -> int:
    ids = sorted(table.column("id").to_pylist()) if table is not None else []
    if len(ids) != len(set(ids)):
        raise AssertionError("an event was read twice")
    batches = {i // ROWS for i in ids}
    if len(ids) != len(batches) * ROWS:
        raise AssertionError(f"a batch was read in part: {len(ids)} ids in {len(batches)} batches")
    return len(batches)


def read(path: str, stop: str) -> None:
    from sparkjournal.events.committed_lanes import committed_lanes
    from sparkjournal.events.commit_log import default_log_uri
    from sparkjournal.events.resolve import shared_log
    from sparkjournal.events.visible_events import read_table
    reads = 0
    while not os.path.exists(stop):
        committed_lanes(shared_log(default_log_uri(path)))
        check_read(read_table(path))
        reads += 1
    print(f"READS {reads}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], int(sys.argv[3]))
    else:
        read(sys.argv[2], sys.argv[3])
