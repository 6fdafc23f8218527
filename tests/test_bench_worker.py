"""``bench read``'s measure of the Python worker's share (tools/bench/worker.py): the
stream it writes is whole, the drain keeps up, and its rows are reported."""
from __future__ import annotations

import io
import os

import pyarrow as pa
import pytest

pytest.importorskip("pyspark")

from sparkjournal import JournalSink  # noqa: E402
from sparkjournal.events.commit_log import CommitLog  # noqa: E402
from sparkjournal.events.lane_scan import LaneSlice, scan  # noqa: E402
from sparkjournal.events.visible_events import node_lanes  # noqa: E402
from sparkjournal.tools.bench.report import REPORTED  # noqa: E402
from sparkjournal.tools.bench.worker import (cpu_rows_per_second, drained_socket,  # noqa: E402
                                             worker_results)


def test_batches_are_written_as_one_whole_arrow_stream_and_their_rows_counted():
    batches = [pa.record_batch({"id": list(range(start, start + 5))}) for start in (0, 5, 10)]
    out = io.BytesIO()
    assert cpu_rows_per_second(out, iter(batches)) > 0
    assert pa.ipc.open_stream(out.getvalue()).read_all().column("id").to_pylist() == \
        list(range(15))


def test_a_drained_socket_takes_more_than_its_buffers_hold():
    big = pa.record_batch({"payload": ["x" * 1000] * 10_000})           # ~10 MB
    with drained_socket() as out:
        assert cpu_rows_per_second(out, iter([big] * 3)) > 0


def test_worker_share_reports_three_rows_without_a_target_after_a_round_of_each(spark, tmp_path):
    path = str(tmp_path / "journal")
    sink = JournalSink(path, txnAppId="q", fileSize="64k", bufferSize="16k")
    sink(spark.range(0, 3000, numPartitions=1).selectExpr("id", "repeat('k', 20) as key"), 0)
    (lane, node), = node_lanes(path)
    log_uri = os.path.join(path, "_commits")
    stored = CommitLog(log_uri).read_schema()
    part = LaneSlice(lane, node, log_uri)
    table = pa.Table.from_batches(list(scan(part, stored, {})))
    floor_file = str(tmp_path / "floor.arrow")
    with pa.ipc.new_file(floor_file, table.schema) as writer:
        writer.write_table(table, max_chunksize=1000)
    logged = []
    results = worker_results(part, stored, {}, stored, floor_file, 300, 1, logged.append)
    assert [r.name.rsplit(", ", 1)[-1] for r in results] == [
        "journal event columns vs python floor",
        "python floor in batches of 300 rows (a record's) vs as written",
        "journal vs the same without CRC checks"]
    assert all(r.target_of == REPORTED and r.value > 0 and r.baseline > 0 for r in results)
    assert len(logged) == 1 and "journal, no CRC checks" in logged[0]
