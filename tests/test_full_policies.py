"""addressFullPolicy: what a writer does when its lane (or its node root) is over
maxSizeBytes (maxRootSizeBytes). First the sizes and the policies on a lane
through the Journal API (maintenance/lane_size.py, full_policy.py), then each
policy through the exactly-once sink on real Spark: FAIL fails the batch with
nothing visible, DROP drops and counts, BLOCK waits until maintenance frees
space and then lands the batch once, PAGE writes on."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
import threading
import time

import pytest

from sparkjournal import Journal, JournalFullError, JournalRoot, load_config
from sparkjournal.journal.large import FOLDER as LARGE
from sparkjournal.maintenance.full_policy import DROP, WRITE, admit
from sparkjournal.maintenance.lane_size import check_full, lane_bytes, root_bytes
from sparkjournal.tools.bench.lanes import half_dead_lane as bench_lane

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SMALL = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}
FILE = 64 << 10


def half_dead_lane(lane: str) -> dict:
    """300 records of 4 KiB, every other one deleted, in sealed files that no
    reclaim can free (each keeps live records); {record id: body} of the live."""
    bench_lane(lane, 300 * 4096, **SMALL)
    return records_of(lane)


def records_of(lane: str) -> dict:
    with Journal.read(lane, **SMALL) as snapshot:
        return {r.record_id: bytes(r.body) for r in snapshot.records()}


# --- sizes --------------------------------------------------------------------------------

def test_lane_size_counts_files_holding_data_and_large_bodies_not_the_free_pool(lane):
    with Journal.open(lane, **SMALL) as journal:
        assert lane_bytes(lane) == 0, "a new lane's pre-created files hold nothing"
        for record_id in range(1, 200):
            journal.append_add(record_id, b"x" * 1000, sync=False)
        journal.flush()
        in_use = len(journal.files)
        assert in_use > 2 and lane_bytes(lane) == in_use * FILE
        for record_id in range(1, 200):
            journal.append_delete(record_id, sync=False)
        journal.append_add(1000, b"y" * 60_000)         # rolls: the dead files are freed
        assert journal.free_files, "the freed files stay on disk, in the pool"
        assert lane_bytes(lane) == len(journal.files) * FILE < in_use * FILE
        journal.append_add(1001, b"z" * 200_000)        # bigger than a data file: large
    body = os.path.getsize(os.path.join(lane, LARGE, os.listdir(os.path.join(lane, LARGE))[0]))
    assert body == 200_000
    assert lane_bytes(lane) >= FILE + body


def test_full_names_the_lane_its_size_the_limit_and_what_to_do(tmp_path):
    root = JournalRoot(str(tmp_path / "root"), **SMALL)
    first, second = root.open_writer(), root.open_writer()
    try:
        for journal in (first, second):
            for record_id in range(1, 150):
                journal.append_add(record_id, b"x" * 1000, sync=False)
            journal.flush()
    finally:
        first.close()
        second.close()
    lane = first.directory
    size, total = lane_bytes(lane), root_bytes(root.path)
    assert total == size + lane_bytes(second.directory)

    assert check_full(lane, load_config({**SMALL, "maxSizeBytes": size})) is None, "at the limit"
    full = check_full(lane, load_config({**SMALL, "maxSizeBytes": size - 1}))
    message = full.message()
    for part in (lane, f"holds {size} bytes", f"maxSizeBytes {size - 1}", "jobs/page.py",
                 "compact", "retention", "raise maxSizeBytes"):
        assert part in message
    full = check_full(lane, load_config({**SMALL, "maxRootSizeBytes": total - 1}))
    assert full.root == root.path and f"hold {total} bytes" in full.message()
    assert "raise maxRootSizeBytes" in full.message()
    assert check_full(lane, load_config({**SMALL, "maxRootSizeBytes": total})) is None


# --- the policies on one lane (Journal API) ----------------------------------------------

def test_fail_and_drop_refuse_and_page_writes_on_logging_once(lane, caplog):
    half_dead_lane(lane)
    limit = lane_bytes(lane) - 1
    caplog.set_level(logging.WARNING, logger="sparkjournal.full")
    for policy in ("FAIL", "DROP", "PAGE"):
        with Journal.open(lane, **SMALL, maxSizeBytes=limit, addressFullPolicy=policy) as journal:
            if policy == "FAIL":
                with pytest.raises(JournalFullError) as error:
                    admit(journal, "batch 7 of query q on host h")
                assert "batch 7 of query q on host h" in str(error.value)
                assert f"holds {limit + 1} bytes" in str(error.value) and lane in str(error.value)
                assert error.value.size == limit + 1 and error.value.limit == limit
            else:
                verdicts = [admit(journal, f"write {n}") for n in range(3)]
                assert verdicts == [DROP if policy == "DROP" else WRITE] * 3
    logged = [r.getMessage() for r in caplog.records]
    assert len([m for m in logged if "addressFullPolicy is DROP" in m]) == 1, logged
    assert len([m for m in logged if "addressFullPolicy is PAGE" in m]) == 1, logged


def test_block_waits_until_a_compaction_in_another_process_frees_space(lane, caplog):
    live = half_dead_lane(lane)
    limit = lane_bytes(lane) - FILE          # a compaction of the half-dead files frees more
    caplog.set_level(logging.WARNING, logger="sparkjournal.full")
    done = threading.Event()
    with Journal.open(lane, **SMALL, maxSizeBytes=limit, addressFullPolicy="BLOCK") as journal:
        waiter = threading.Thread(target=lambda: (admit(journal, "the next write", poll=0.05),
                                                  done.set()))
        waiter.start()
        try:
            assert not done.wait(0.5), "BLOCK admitted a write into a full lane"
            code = ("import sys\nfrom sparkjournal.maintenance.compactor import compact_lane\n"
                    "print(compact_lane(sys.argv[1], force=True, fileSize='64k', bufferSize='16k',"
                    " minFiles=2).line())\n")
            compactor = subprocess.run([sys.executable, "-c", code, lane], capture_output=True,
                                       text=True, env={**os.environ, "PYTHONPATH": REPO})
            assert compactor.returncode == 0, compactor.stderr
            assert "compacted" in compactor.stdout
            assert done.wait(30), "BLOCK did not notice the space freed"
        finally:
            waiter.join(30)
        journal.append_add(5000, b"after the wait")
    live[5000] = b"after the wait"
    assert records_of(lane) == live
    logged = [r.getMessage() for r in caplog.records]
    assert any("addressFullPolicy is BLOCK: the next write waits" in m for m in logged), logged
    assert any("has space again" in m for m in logged), logged


# --- each policy through the exactly-once sink, on real Spark ----------------------------
# One partition per batch, and lanes released 200 ms after a task, so every task
# of these tests writes into lane-000 (wait_lanes_free before each batch). The
# policies are the tasks': smallBatchRows=0, or local mode's driver would write.
LIMIT = 128 << 10
SPARK_OPTIONS = {**SMALL, "maxSizeBytes": str(LIMIT), "laneIdleTimeout": "200ms"}


def events(spark, start, count):
    return spark.range(start, start + count, numPartitions=1).selectExpr(
        "id", "timestamp_seconds(id) as ts", "substr(sha2(cast(id as string), 256), 1, 16) as key",
        "repeat('p', 200) as payload")


def ids_of(path):
    from sparkjournal import read_table
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def decision(path, batch):
    from sparkjournal.events.commit_log import CommitLog
    return CommitLog(os.path.join(path, "_commits")).decision("q", batch)


@pytest.fixture(params=["jvm", "python"])
def full_journal(request, spark, tmp_path, wait_lanes_free):
    """(path, lane, sink factory) of a journal whose one lane batch 0 (ids
    0..999) filled past maxSizeBytes; the factory makes a sink with a policy,
    its tasks written by the JVM task writer or by Python's (the param)."""
    pytest.importorskip("pyspark")
    from sparkjournal import JournalSink
    from sparkjournal.events.visible_events import lanes_of
    path = str(tmp_path / "journal")

    def sink(policy, **options):
        return JournalSink(path, txnAppId="q", **{**SPARK_OPTIONS, "smallBatchRows": 0,
                                                  "writer": request.param,
                                                  "addressFullPolicy": policy, **options})
    sink("FAIL")(events(spark, 0, 1000), 0)
    lanes = lanes_of(path)
    assert len(lanes) == 1 and lane_bytes(lanes[0]) > LIMIT
    wait_lanes_free(lanes)
    return path, lanes[0], sink


def test_fail_policy_fails_the_batch_naming_batch_host_lane_size_limit_nothing_visible(
        spark, full_journal, wait_lanes_free):
    path, lane, sink = full_journal
    # The root limit too: a retried attempt that finds the full lane held by the
    # failed attempt's worker takes a new, empty lane, which only the root limit fills.
    with pytest.raises(Exception) as failure:
        sink("FAIL", maxRootSizeBytes=str(LIMIT))(events(spark, 1000, 500), 1)
    message = str(failure.value)
    kind = "JournalFullError" if sink("FAIL").writer_option.upper() == "PYTHON" else "JournalFullException"
    assert kind in message, message[:2000]
    for part in ("batch 1 of query q on host", f"{path}/lane-", " hold", f"{LIMIT}"):
        assert part in message        # the last attempt's lane: the full one, or a new one
    assert f"over maxSizeBytes {LIMIT}" in message or "maxRootSizeBytes" in message
    assert decision(path, 1) is None and ids_of(path) == list(range(1000))
    wait_lanes_free([lane])
    sink("FAIL", maxSizeBytes="10m")(events(spark, 1000, 500), 1)   # the limit raised: lands once
    assert ids_of(path) == list(range(1500))


def test_drop_policy_drops_counts_in_metrics_and_log_and_lands_nothing(spark, full_journal,
                                                                        wait_lanes_free, caplog):
    path, lane, sink = full_journal
    dropping = sink("DROP")
    with caplog.at_level(logging.WARNING, logger="sparkjournal.sink"):
        dropping(events(spark, 1000, 500), 1)
    metrics = dropping.history[-1]
    assert (metrics.dropped_rows, metrics.rows, metrics.tasks) == (500, 0, 1)
    assert len(metrics.dropped_lanes) == 1 and metrics.dropped_lanes[0].endswith("/lane-000")
    assert "500 rows DROPPED" in metrics.line()
    assert any("500 rows DROPPED" in r.getMessage() for r in caplog.records)
    assert decision(path, 1).txs == [], "the batch is decided: a replay never lands it later"
    assert ids_of(path) == list(range(1000))
    wait_lanes_free([lane])
    events(spark, 2000, 300).write.format("sparkjournal").mode("append") \
        .options(**{**SPARK_OPTIONS, "addressFullPolicy": "DROP",
                    "writer": dropping.writer_option}).save(path)
    assert ids_of(path) == list(range(1000)), "the format's writer drops too"
    wait_lanes_free([lane])
    dropping(events(spark, 1000, 500), 1)                          # Spark replays batch 1
    assert dropping.history[-1].skipped and ids_of(path) == list(range(1000))


def test_page_policy_writes_on_past_the_limit(spark, full_journal):
    path, lane, sink = full_journal
    paging = sink("PAGE")
    paging(events(spark, 1000, 500), 1)
    assert paging.history[-1].rows == 500 and paging.history[-1].dropped_rows == 0
    assert ids_of(path) == list(range(1500))


def _start_blocked_batch(spark, sink, batch, start, count, group=None):
    """Runs sink(batch) in a thread; returns (thread, outcome) once its task runs."""
    outcome = {}

    def run():
        if group:
            spark.sparkContext.setJobGroup(group, "a blocked batch", interruptOnCancel=True)
        try:
            sink(events(spark, start, count), batch)
            outcome["done"] = True
        except Exception as error:          # noqa: BLE001 - the test checks it
            outcome["error"] = error
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + 60
    while not any(s and s.numActiveTasks for s in map(tracker.getStageInfo,
                                                       tracker.getActiveStageIds())):
        assert thread.is_alive() and time.monotonic() < deadline, outcome
        time.sleep(0.05)
    return thread, outcome


def _assert_waiting(path, lane, thread, outcome):
    """The batch's task runs but wrote nothing: no record, no open transaction."""
    thread.join(0.5)
    assert thread.is_alive(), f"the batch finished on a full lane: {outcome}"
    with Journal.read(lane, **SMALL) as snapshot:
        assert snapshot.open_transactions() == {} and snapshot.prepared() == []
    assert ids_of(path) == list(range(1000))


def test_block_policy_waits_until_retention_frees_space_then_lands_once(spark, full_journal):
    from sparkjournal.events.node import read_node_id
    from sparkjournal.maintenance.lane_maintenance import maintain_lane
    path, lane, sink = full_journal
    blocking = sink("BLOCK")
    thread, outcome = _start_blocked_batch(spark, blocking, 1, 1000, 500)
    _assert_waiting(path, lane, thread, outcome)
    # A maintenance pass from another thread: retention keeps the newest 16k per
    # lane. A waiting Python task holds the lane, carries the delete out and frees
    # the files it leaves dead. A waiting JVM task gave the lane up: the pass
    # carries the delete out itself, and the next pass's open frees those files.
    config = load_config({**SMALL, "retention": "16k"})
    node, log_uri = read_node_id(os.path.dirname(lane)), os.path.join(path, "_commits")
    report = maintain_lane(lane, node, log_uri, config)
    holder_carries_out = blocking.writer_option.upper() == "PYTHON"
    assert report.error is None and report.retention.records > 0
    assert report.requests_pending == (1 if holder_carries_out else 0)
    if not holder_carries_out:
        assert thread.is_alive(), "the dead files are still on disk: the JVM task waits"
        assert maintain_lane(lane, node, log_uri, config).swept
    thread.join(60)
    assert outcome == {"done": True}
    ids = ids_of(path)
    assert len(ids) == len(set(ids)), "an event landed twice"
    kept = [i for i in ids if i < 1000]
    assert kept and kept == list(range(kept[0], 1000)), "retention keeps the newest events"
    assert ids[len(kept):] == list(range(1000, 1500))
    assert blocking.history[-1].rows == 500


@pytest.mark.slow          # ~10 s: Spark kills a Python worker only after its task-kill timeout
def test_block_policy_wait_is_interrupted_by_a_spark_task_kill(spark, full_journal, wait_lanes_free):
    path, lane, sink = full_journal
    thread, outcome = _start_blocked_batch(spark, sink("BLOCK"), 1, 1000, 500, group="blocked")
    _assert_waiting(path, lane, thread, outcome)
    spark.sparkContext.cancelJobGroup("blocked")
    thread.join(60)
    assert not thread.is_alive() and "error" in outcome
    wait_lanes_free([lane])                              # the waiting worker let the lane go
    assert decision(path, 1) is None and ids_of(path) == list(range(1000))
    sink("BLOCK", maxSizeBytes="10m")(events(spark, 1000, 500), 1)
    assert ids_of(path) == list(range(1500))
