"""`sparkjournal status`: one screen on a real journal written by the sink's
own task writer and committer - nodes, lanes, events live / deleted / paged,
undecided batches, the commit log, damaged files (exit 1, named)."""
from __future__ import annotations

import json
import os

from sparkjournal.cli.main import main
from sparkjournal.spark.committer import BatchCommitter

from test_abort import ROWS, land, write


def status(path: str, capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["status", path, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_status_shows_nodes_lanes_events_undecided_and_the_commit_log(tmp_path, capsys):
    path = str(tmp_path / "journal")
    committer = BatchCommitter(path, {})
    for batch in range(3):
        land(committer, path, "q", batch, batch * ROWS)
    write(committer, path, "q", 3, 100)
    code, found = status(path, capsys)
    assert code == 0
    [node] = found["nodes"]
    assert node["on_this_host"] and node["batches"] == 3 and node["events_committed"] == 3 * ROWS
    assert found["events"] == {"live": 3 * ROWS, "deleted": 0, "paged": 0}
    assert [(b["query"], b["batch"]) for b in found["undecided"]] == [("q", 3)]
    assert found["commit_log"]["entries_on_disk"] == 3 and found["damaged"] == []
    assert main(["status", path]) == 0
    screen = capsys.readouterr().out
    assert "15 live, 0 deleted, 0 paged" in screen
    assert f"sparkjournal transactions {path}" in screen and "damaged      none" in screen


def test_status_names_a_damaged_file_and_exits_1(tmp_path, capsys):
    from lane_surgery import damage_a_sealed_record
    from sparkjournal.spark.lane_cache import drop_writer
    path = str(tmp_path / "journal")
    committer = BatchCommitter(path, {"fileSize": "64k", "bufferSize": "32k"})
    for batch in range(4):
        land(committer, path, "q", batch, batch * 10_000, rows=3000)
    drop_writer(path, (("bufferSize", "32k"), ("fileSize", "64k")))
    [lane] = [os.path.join(path, n) for n in os.listdir(path) if n.startswith("lane-")]
    damaged, _offset = damage_a_sealed_record(lane)
    code, found = status(path, capsys)
    assert code == 1
    assert any(os.path.basename(damaged) in entry for entry in found["damaged"]), found["damaged"]
    assert main(["status", path]) == 1
    assert f"run `sparkjournal verify {path}`" in capsys.readouterr().out
