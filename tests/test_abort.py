"""Undecided batches and the operator's abort, through the sink's own task
writer and committer on real lanes (no Spark: the protocol is the same):
an undecided batch holds every stream of its lane, `sparkjournal
transactions` shows it, `sparkjournal abort` decides it as aborted, and the
query's return writes it again at the next epoch - nothing lost, nothing
doubled; the abort and the driver's commit race for one exclusive entry."""
from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from sparkjournal.cli.main import main
from sparkjournal.events.commit_log import BatchAbortedError
from sparkjournal.events.visible_events import lanes_of, read_table
from sparkjournal.spark.committer import BatchCommitter, BatchMetrics
from sparkjournal.spark.lane_writer import WritePlan, write_task
from sparkjournal.spark.stream_reader import stable_point

ROWS = 5


def write(committer: BatchCommitter, path: str, query: str, batch: int, first: int,
          rows: int = ROWS):
    """One task of ``batch`` of ``query``: its events prepared, its message returned."""
    events = pa.table({"id": pa.array(range(first, first + rows), pa.int64())})
    committer.check_schema(events.schema, f"batch {batch}")
    plan = WritePlan(path, tuple(sorted(committer.options.items())), committer.log_uri, query, batch,
                     committer.log.log_id(create=True))
    return write_task(iter(events.to_batches()), plan)


def land(committer: BatchCommitter, path: str, query: str, batch: int, first: int,
         rows: int = ROWS):
    message = write(committer, path, query, batch, first, rows)
    return committer.commit(query, batch, [message], BatchMetrics(query, batch))


def ids(path: str) -> list[int]:
    table = read_table(path)
    return sorted(table.column("id").to_pylist()) if table is not None else []


def undecided_record_ids(lane: str, tx: int) -> list[int]:
    from sparkjournal.journal.journal import Journal
    with Journal.read(lane) as snapshot:
        return [p for t in snapshot.prepared() if t.tx_id == tx for p in t.record_ids]


def transactions(path: str, capsys, *extra) -> dict:
    capsys.readouterr()
    assert main(["transactions", path, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def hanging(tmp_path):
    """Q1's batch 1 prepared and left undecided; Q2's batches 0-2 committed
    after it into the same lane."""
    path = str(tmp_path / "journal")
    committer = BatchCommitter(path, {})
    land(committer, path, "Q1", 0, 0)
    undecided = write(committer, path, "Q1", 1, 100)
    for batch in range(3):
        land(committer, path, "Q2", batch, 1000 + batch * ROWS)
    return path, committer, undecided


def test_an_undecided_batch_holds_the_stream_and_transactions_lists_it(hanging, capsys):
    path, committer, undecided = hanging
    [lane] = lanes_of(path)
    node = undecided.node
    assert ids(path) == list(range(ROWS)) + list(range(1000, 1000 + 3 * ROWS))
    with_q2 = stable_point(lane, node, {})
    assert with_q2 <= min(undecided_record_ids(lane, undecided.tx))     # Q2's events wait
    found = transactions(path, capsys)
    [batch] = found["undecided"]
    assert (batch["query"], batch["batch"], batch["epoch"]) == ("Q1", 1, 0)
    assert batch["rows"] == ROWS and batch["held_back_events"] == 3 * ROWS
    assert batch["nodes"] == [node] and batch["lanes"][0]["tx"] == undecided.tx
    assert batch["age_s"] is not None and batch["age_s"] < 600
    assert transactions(path, capsys, "--hanging", "1h")["undecided"] == []
    assert main(["transactions", path]) == 0
    assert "holds back 15 committed events" in capsys.readouterr().out


def test_abort_releases_the_stream_and_the_returning_query_writes_the_batch_again(hanging, capsys):
    path, committer, undecided = hanging
    [lane] = lanes_of(path)
    held_at = stable_point(lane, undecided.node, {})
    assert main(["abort", path, "--query", "Q1", "--batch", "1", "--yes"]) == 0
    assert "aborted batch 1 of query Q1 (epoch 0)" in capsys.readouterr().out
    released = stable_point(lane, undecided.node, {})
    assert released > held_at
    assert transactions(path, capsys)["undecided"] == []
    assert transactions(path, capsys)["aborted_waiting"][0]["batch"] == 1
    assert ids(path) == list(range(ROWS)) + list(range(1000, 1000 + 3 * ROWS))
    # Q1 returns: Spark replays batch 1, which is not done; the sink writes it at epoch 1.
    returning = BatchCommitter(path, {})
    assert not returning.is_committed("Q1", 1)
    decision = land(returning, path, "Q1", 1, 100)
    assert decision.epoch == 1 and not decision.aborted
    assert returning.is_committed("Q1", 1)
    assert ids(path) == sorted(list(range(ROWS)) + list(range(100, 100 + ROWS)) +
                               list(range(1000, 1000 + 3 * ROWS)))
    assert stable_point(lane, undecided.node, {}) >= released
    assert transactions(path, capsys)["aborted_waiting"] == []


def test_an_abort_landing_first_fails_the_drivers_commit(hanging, capsys):
    path, committer, undecided = hanging
    assert main(["abort", path, "--query", "Q1", "--batch", "1", "--yes"]) == 0
    with pytest.raises(BatchAbortedError, match="aborted by an operator .* Restart the query"):
        committer.commit("Q1", 1, [undecided], BatchMetrics("Q1", 1))
    assert ids(path) == list(range(ROWS)) + list(range(1000, 1000 + 3 * ROWS))


def test_a_commit_landing_first_refuses_the_abort(hanging, capsys):
    path, committer, undecided = hanging
    committer.commit("Q1", 1, [undecided], BatchMetrics("Q1", 1))
    capsys.readouterr()
    assert main(["abort", path, "--query", "Q1", "--batch", "1", "--yes"]) == 1
    assert "is committed" in capsys.readouterr().err
    assert 100 in ids(path)


def test_tasks_on_both_sides_of_an_abort_fail_the_batch(hanging, capsys):
    path, committer, undecided = hanging
    assert main(["abort", path, "--query", "Q1", "--batch", "1", "--yes"]) == 0
    again = write(committer, path, "Q1", 1, 100)
    assert again.epoch == 1
    with pytest.raises(BatchAbortedError, match="while its tasks ran"):
        committer.commit("Q1", 1, [undecided, again], BatchMetrics("Q1", 1))


def test_abort_without_a_terminal_asks_for_yes(hanging, capsys):
    path, _committer, _undecided = hanging
    assert main(["abort", path, "--query", "Q1", "--batch", "1"]) == 2
    assert "--yes" in capsys.readouterr().err
    assert transactions(path, capsys)["undecided"][0]["batch"] == 1


def test_transactions_refuses_an_age_it_cannot_read(tmp_path, capsys):
    assert main(["transactions", str(tmp_path), "--hanging", "soon"]) == 2
    assert "--hanging 'soon' is not an age" in capsys.readouterr().err


def test_streams_and_maintenance_warn_of_a_hanging_batch_naming_the_commands(hanging, caplog):
    import time as clock
    from sparkjournal.config import load_config
    from sparkjournal.maintenance.root_maintenance import maintain_path
    from sparkjournal.spark.lane_cache import drop_writer
    path, _committer, undecided = hanging
    [lane] = lanes_of(path)
    clock.sleep(0.02)
    with caplog.at_level("WARNING", logger="sparkjournal.undecided"):
        stable_point(lane, undecided.node, {"undecidedWarnAfter": "1ms"})
    assert "batch 1 of query Q1 has been undecided" in caplog.text
    assert f"sparkjournal abort {path} --query Q1 --batch 1" in caplog.text
    assert f"sparkjournal transactions {path}" in caplog.text
    caplog.clear()
    drop_writer(path, ())                                  # the lane free for maintenance
    clock.sleep(0.002)
    with caplog.at_level("WARNING", logger="sparkjournal.undecided"):
        maintain_path(path, load_config({"undecidedWarnAfter": "1ms"}))
    assert "batch 1 of query Q1 has been undecided" in caplog.text
