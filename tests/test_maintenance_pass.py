"""One maintenance pass (lane_maintenance.py, ``sparkjournal compact``): retention
by age and by size, the sweep of a lane no writer holds (prepared transactions
the commit log decided, pending requests), compaction - before and after which
the visible events are the same - and the command line's report and exit status."""
from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from sparkjournal import Journal, JournalSink, read_table  # noqa: E402
from sparkjournal.cli.main import main  # noqa: E402
from sparkjournal.config import load_config  # noqa: E402
from sparkjournal.events.commit_log import CommitLog  # noqa: E402
from sparkjournal.events.requests import pending  # noqa: E402
from sparkjournal.events.visible_events import lane_event_records, node_lanes  # noqa: E402
from sparkjournal.maintenance.lane_maintenance import maintain_lane  # noqa: E402
from sparkjournal.maintenance.retention import expired_records  # noqa: E402
from sparkjournal.spark.lane_cache import drop_writer  # noqa: E402
from sparkjournal.spark.lane_writer import WritePlan, write_task  # noqa: E402

SMALL = {"fileSize": "64k", "bufferSize": "16k"}
# The sinks write through tasks (smallBatchRows=0, not local mode's driver): lanes
# of Python workers, released after laneIdleTimeout, as a pass finds them on a cluster.
TASKS = {"laneIdleTimeout": "200ms", "smallBatchRows": 0}


def frame(spark, start, count):
    return spark.range(start, start + count, numPartitions=2).selectExpr(
        "id", "repeat('p', 300) as payload")


def ids(path) -> list[int]:
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def decided_at(path, batch) -> float:
    return CommitLog(os.path.join(path, "_commits")).decision("q", batch).committed_at_ms / 1e3


def test_retention_by_age_deletes_the_batches_committed_before_the_cutoff(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", **TASKS)
    sink(frame(spark, 0, 300), 0)
    sink(frame(spark, 300, 300), 1)
    sink(frame(spark, 600, 300), 2)
    log_uri = os.path.join(path, "_commits")
    # "now" is just after batch 2's commit; the age reaches back past batch 1 only.
    now = decided_at(path, 2) + 0.001
    age = now - (decided_at(path, 0) + decided_at(path, 1)) / 2
    config = load_config({"retention": f"{age}s"})
    expired = {}
    for lane, node in node_lanes(path):
        expired.update(expired_records(lane, node, log_uri, config, now=now))
    assert expired, "batch 0 is past the retention age"
    for lane, node in node_lanes(path):
        maintain_lane(lane, node, log_uri, config, now=now)
    assert ids(path) == list(range(300, 900))


def test_retention_by_size_keeps_the_newest_records_up_to_the_size(spark, tmp_path, wait_lanes_free):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", **TASKS, **SMALL)
    for batch in range(5):
        sink(frame(spark, batch * 400, 400), batch)
    log_uri = os.path.join(path, "_commits")
    config = load_config({"retention": "40k", **SMALL})
    wait_lanes_free([lane for lane, _node in node_lanes(path)])   # so the pass sweeps them
    for lane, node in node_lanes(path):
        with Journal.read(lane) as snapshot:       # committed, or prepared and decided
            before = sorted(r.record_id for r in lane_event_records(snapshot, node,
                                                                    os.path.basename(lane)))
        report = maintain_lane(lane, node, log_uri, config, force=True)
        assert report.error is None and report.retention.records > 0, report.line()
        with Journal.read(lane) as snapshot:
            kept = [r for r in snapshot.records() if r.user_type == 1]
        assert 0 < sum(r.body_len for r in kept) <= 40 << 10
        assert sorted(r.record_id for r in kept) == before[-len(kept):]     # the newest stay
    assert 0 < len(ids(path)) < 2000


def test_a_pass_resolves_what_a_dead_worker_left_and_is_idempotent(spark, tmp_path):
    path = str(tmp_path / "journal")
    log_uri = os.path.join(path, "_commits")
    JournalSink(path, txnAppId="q", **TASKS)(frame(spark, 0, 10), 0)
    table = pa.table({"id": pa.array(range(100, 110), pa.int64()), "payload": ["x"] * 10})
    plan = WritePlan(path, (), log_uri, "q", 1)
    message = write_task(iter(table.to_batches()), plan)      # PREPAREd here; this process
    drop_writer(plan.path, plan.options)                      # then "dies" before COMMIT
    CommitLog(log_uri).record("q", 1, [message.decided()])              # the driver decided it
    lane = os.path.join(message.root, message.lane)
    with Journal.read(lane) as snapshot:
        assert [p.tx_id for p in snapshot.prepared()] == [message.tx]
    report = maintain_lane(lane, message.node, log_uri, load_config())
    assert report.swept and report.committed == 1 and report.error is None, report.line()
    with Journal.read(lane) as snapshot:
        assert snapshot.prepared() == []
    again = maintain_lane(lane, message.node, log_uri, load_config())
    assert (again.committed, again.rolled_back, again.requests_done) == (0, 0, 0)
    assert ids(path) == list(range(10)) + list(range(100, 110))


def test_compact_command_expires_sweeps_compacts_and_reports_every_lane(spark, tmp_path, capsys,
                                                                         wait_lanes_free):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", **TASKS, **SMALL)
    for batch in range(6):
        sink(frame(spark, batch * 500, 500), batch)
    lanes = [lane for lane, _node in node_lanes(path)]
    wait_lanes_free(lanes)
    out = str(tmp_path / "report.json")
    options = ["--option", "retention=60k", "--option", "fileSize=64k", "--option", "bufferSize=16k"]
    status = main(["compact", path, "--force", "--json", out, *options])
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert all(f"{os.path.basename(lane)}: swept" in printed for lane in lanes), printed
    totals = json.load(open(out))["totals"]
    assert totals["lanes"] == len(lanes) and totals["failed"] == []
    assert totals["records_expired"] > 0 and totals["compacted_lanes"] >= 1, totals
    assert totals["files_after"] < totals["files_before"] and totals["bytes_reclaimed"] > 0
    left = ids(path)
    assert 0 < len(left) < 3000
    assert main(["compact", path, *options]) == 0            # a second pass changes nothing
    again = capsys.readouterr().out
    assert "past retention" in again and ", 0 stored records past retention" in again
    assert ids(path) == left and not any(pending(lane) for lane in lanes)


def test_compact_command_exits_1_when_a_lane_fails(tmp_path, capsys):
    lane = str(tmp_path / "lane-000")
    with Journal.open(lane, fileSize="64k", bufferSize="16k") as journal:
        for record_id in range(1, 200):
            journal.append_add(record_id, b"r" * 1000, sync=False)
    with open(os.path.join(lane, "compact.ctl"), "w") as handle:
        handle.write("not a control file")
    assert main(["compact", str(tmp_path), "--force"]) == 1
    printed = capsys.readouterr().out
    assert "FAILED" in printed and "compact.ctl" in printed
