"""Commit log checkpoints, commit times and retention (format/COMMIT_LOG.md)
against a plain in-memory model of every decision ever written."""
from __future__ import annotations

import os
import random

import pytest

from sparkjournal.errors import FormatVersionError
from sparkjournal.events.commit_log import CommitLog, CommitLogError, TxRef
from sparkjournal.events.commit_times import CommitTimesDamage
from sparkjournal.events.committed_lanes import committed_lanes
from sparkjournal.events.log_checkpoint import Checkpoint, LaneState
from sparkjournal.events.log_state import LogState
from sparkjournal.events.log_view import CHECKPOINTS
from sparkjournal.maintenance.log_checkpointer import checkpoint, expire

NODES = ("n1@h1", "n2@h2")
LANES = ("lane-000", "lane-001", "lane-002")


class Model:
    """Every decision: {(query, batch): (committed_at_ms, {TxRef})}, plus the
    prepared transactions that lost (never listed)."""

    def __init__(self):
        self.decided: dict = {}
        self.losers: list = []
        self.next_tx = {(n, lane): 1 for n in NODES for lane in LANES}

    def tx(self, node, lane) -> TxRef:
        tx = self.next_tx[(node, lane)]
        self.next_tx[(node, lane)] = tx + 1
        return TxRef(node, lane, tx)

    def outcome(self, query, batch, ref) -> str:
        found = self.decided.get((query, batch))
        if found is not None:
            return "committed" if ref in found[1] else "aborted"
        later = any(q == query and b > batch for q, b in self.decided)
        return "aborted" if later else "undecided"


def land(log: CommitLog, model: Model, rng: random.Random, query: str, batch: int) -> None:
    refs = set()
    for node in rng.sample(NODES, rng.randint(1, 2)):
        for lane in rng.sample(LANES, rng.randint(1, 2)):
            if rng.random() < 0.2:                    # a losing attempt, or maintenance's tx
                model.losers.append((query, batch, model.tx(node, lane)))
            refs.add(model.tx(node, lane))
    txs = [{"node": r.node, "lane": r.lane, "tx": r.tx, "rows": 3, "host": r.node[-2:],
            "root": "/r"} for r in sorted(refs, key=lambda r: (r.node, r.lane, r.tx))]
    decision = log.record(query, batch, txs)
    model.decided[(query, batch)] = (decision.committed_at_ms, refs)


def check(uri: str, model: Model) -> None:
    state = LogState(uri)                             # a fresh process's view
    for (query, batch), (at_ms, refs) in model.decided.items():
        assert state.committed_at_ms(query, batch) == at_ms, (query, batch)
        assert state.done(query, batch)
        for ref in refs:
            assert state.outcome(query, batch, ref) == "committed", (query, batch, ref)
    for query, batch, ref in model.losers:
        assert state.outcome(query, batch, ref) == "aborted", (query, batch, ref)
    lanes = committed_lanes(state)
    expected = {(r.node, r.lane) for _at, refs in model.decided.values() for r in refs}
    assert set(lanes) == expected
    for key, lane in lanes.items():
        assert lane.batches == sum(1 for _at, refs in model.decided.values()
                                   if any((r.node, r.lane) == key for r in refs))
        assert lane.node_batches == sum(1 for _at, refs in model.decided.values()
                                        if any(r.node == lane.node for r in refs))


@pytest.mark.parametrize("seed", range(6))
def test_view_matches_model_through_checkpoints_and_retention(tmp_path, seed):
    rng = random.Random(seed)
    uri = str(tmp_path / "_commits")
    log, model = CommitLog(uri), Model()
    batches = {"q1": 0, "q2": 0}
    for step in range(160):
        query = rng.choice(list(batches))
        land(log, model, rng, query, batches[query])
        batches[query] += 1
        if rng.random() < 0.1:
            checkpoint(log)
        if rng.random() < 0.1:      # everything old enough: only the checkpoints protect
            expire(log, retain_batches=rng.choice([0, 5]), retain_ns=0, now=2e9)
        if step % 40 == 39:
            check(uri, model)
    check(uri, model)
    # undecided: the next batch of each query, prepared but not decided
    state = LogState(uri)
    for query, next_batch in batches.items():
        ref = model.tx(NODES[0], LANES[0])
        assert state.outcome(query, next_batch, ref) == "undecided"
        assert not state.done(query, next_batch)


def test_retention_keeps_what_the_previous_checkpoint_does_not_cover(tmp_path):
    log, model = CommitLog(str(tmp_path / "_commits")), Model()
    rng = random.Random(1)
    for batch in range(10):
        land(log, model, rng, "q", batch)
    assert checkpoint(log)[1] == 10
    assert expire(log, 0, 0, now=2e9) == (0, 0, 0)            # one checkpoint: nothing goes
    for batch in range(10, 15):
        land(log, model, rng, "q", batch)
    assert checkpoint(log)[1] == 5
    deleted, _, _ = expire(log, 2, 0, now=2e9)
    assert deleted == 10                                      # 0-9: covered by both; newest kept
    assert sorted(log.batches("q")) == list(range(10, 15))
    check(log.uri, model)


def test_retention_time_protects_young_entries(tmp_path):
    log, model = CommitLog(str(tmp_path / "_commits")), Model()
    rng = random.Random(2)
    for batch in range(6):
        land(log, model, rng, "q", batch)
        checkpoint(log)
    assert expire(log, 0, retain_ns=3600 * 10**9)[0] == 0
    assert expire(log, 0, retain_ns=0, now=2e9)[0] == 5       # all but the newest checkpoint's
    check(log.uri, model)


def test_damaged_newest_checkpoint_falls_back_to_the_previous(tmp_path, caplog):
    log, model = CommitLog(str(tmp_path / "_commits")), Model()
    rng = random.Random(3)
    for batch in range(8):
        land(log, model, rng, "q", batch)
        if batch in (3, 7):
            checkpoint(log)
    expire(log, 0, 0, now=2e9)
    newest = sorted(os.listdir(tmp_path / "_commits" / CHECKPOINTS))[-1]
    (tmp_path / "_commits" / CHECKPOINTS / newest).write_bytes(b'{"format": 1, "seq": ')
    check(log.uri, model)
    assert f"checkpoint {tmp_path}/_commits/{CHECKPOINTS}/{newest} is not JSON" in caplog.text


def test_newer_checkpoint_format_is_refused(tmp_path):
    log = CommitLog(str(tmp_path / "_commits"))
    log.record("q", 0, [])
    checkpoint(log)
    path = tmp_path / "_commits" / CHECKPOINTS / f"{0:020d}.json"
    path.write_text(path.read_text().replace('"format":1', '"format":2'))
    with pytest.raises(FormatVersionError, match="written by a newer sparkjournal"):
        LogState(log.uri).view()


def test_damaged_commit_times_are_named(tmp_path):
    log = CommitLog(str(tmp_path / "_commits"))
    log.record("q", 0, [])
    checkpoint(log)
    (segment,) = (tmp_path / "_commits" / "_times" / "q").iterdir()
    raw = bytearray(segment.read_bytes())
    raw[-6] ^= 1
    segment.write_bytes(bytes(raw))
    log.delete([f"{log.base}/q/{0:020d}.json"])
    with pytest.raises(CommitTimesDamage, match=f"{segment} fails its CRC"):
        LogState(log.uri).committed_at_ms("q", 0)


def test_a_decision_past_a_gap_is_in_the_view_at_once(tmp_path):
    """A stream's empty micro-batch written through the DataSource writer has
    no entry: the batches after it must not wait for a checkpoint."""
    log = CommitLog(str(tmp_path / "_commits"))
    for batch in (0, 1):
        log.record("app", batch, [{"node": "n@h", "lane": "lane-000", "tx": batch + 1}])
    checkpoint(log)
    log.record("app", 5, [{"node": "n@h", "lane": "lane-000", "tx": 9}])
    state = LogState(log.uri)
    assert state.outcome("app", 5, TxRef("n@h", "lane-000", 9)) == "committed"
    assert state.outcome("app", 3, TxRef("n@h", "lane-000", 5)) == "aborted"
    assert state.done("app", 3) and not state.done("app", 6)
    assert sum(map(len, state.view().entries.values())) == 1       # counts toward the interval
    checkpoint(log)
    assert state.outcome("app", 5, TxRef("n@h", "lane-000", 9)) == "committed"
    assert state.outcome("app", 3, TxRef("n@h", "lane-000", 5)) == "aborted"


def test_lane_ranges_merge_and_keep_holes():
    lane = LaneState("n", "h", "/r", "lane-000")
    for tx in (5, 3, 4, 9, 7, 1, 8):
        lane.add_tx(tx)
    assert lane.committed == [[1, 1], [3, 5], [7, 9]]
    lane.add_tx(6)
    lane.add_tx(2)
    assert lane.committed == [[1, 9]]
    assert lane.commits(9) and not lane.commits(10) and not lane.commits(0)


def test_checkpoint_size_follows_live_state_not_batches(tmp_path):
    log = CommitLog(str(tmp_path / "_commits"))
    sizes = []
    for batch in range(1200):
        log.record("q", batch, [{"node": "n@h", "lane": f"lane-00{t}", "tx": batch + 1,
                                 "rows": 10} for t in range(4)])
        if batch % 400 == 399:
            name, _ = checkpoint(log)
            sizes.append(os.path.getsize(f"{log.base}/{CHECKPOINTS}/{name}"))
    assert sizes[0] == sizes[-1] or abs(sizes[-1] - sizes[0]) < 16, sizes
    assert Checkpoint().through("q") == -1


def test_a_damaged_newest_checkpoint_is_passed_by_the_next_writer(tmp_path, caplog):
    log, model = CommitLog(str(tmp_path / "_commits")), Model()
    rng = random.Random(4)
    folder = tmp_path / "_commits" / CHECKPOINTS
    for batch in range(12):
        land(log, model, rng, "q", batch)
        if batch % 4 == 3:
            checkpoint(log)
            expire(log, 0, 0, now=2e9)
    newest = sorted(os.listdir(folder))[-1]
    (folder / newest).write_bytes(b"[]")
    for batch in range(12, 16):
        land(log, model, rng, "q", batch)
    name, folded = checkpoint(log)
    assert int(name[:-5]) == int(newest[:-5]) + 1 and folded == 8     # from the one before
    assert expire(log, 0, 0, now=2e9) == (0, 0, 0)                     # waits: previous damaged
    check(log.uri, model)
    assert "is not a JSON object" in caplog.text


def test_two_damaged_checkpoints_fail_the_read_naming_them(tmp_path):
    log = CommitLog(str(tmp_path / "_commits"))
    for batch in range(6):
        log.record("q", batch, [])
        checkpoint(log)
    expire(log, 0, 0, now=2e9)
    folder = tmp_path / "_commits" / CHECKPOINTS
    names = sorted(os.listdir(folder))
    for name in names:
        (folder / name).write_bytes(b"{")
    with pytest.raises(CommitLogError, match=f"{names[-1]} is not JSON.*{names[-2]} is not "
                                             f"JSON.*restore {CHECKPOINTS}/ from a backup"):
        LogState(log.uri).view()


def test_retention_repairs_commit_times_a_racing_writer_lost(tmp_path, caplog):
    log, model = CommitLog(str(tmp_path / "_commits")), Model()
    rng = random.Random(5)
    for batch in range(6):
        land(log, model, rng, "q", batch)
    checkpoint(log)
    (segment,) = (tmp_path / "_commits" / "_times" / "q").iterdir()
    stale = segment.read_bytes()
    for batch in range(6, 9):
        land(log, model, rng, "q", batch)
    checkpoint(log)
    segment.write_bytes(stale)                  # a writer that read it before: slots 6-8 lost
    for batch in range(9, 12):
        land(log, model, rng, "q", batch)
    checkpoint(log)
    assert expire(log, 0, 0, now=2e9)[0] == 9
    check(log.uri, model)
    assert "3 commit times of q were not in their segments" in caplog.text


def test_one_checkpointer_per_log_and_one_process_at_a_time(tmp_path):
    from sparkjournal.config import load_config
    from sparkjournal.maintenance.log_checkpointer import _checkpoint_lock, for_log, maintain
    log = CommitLog(str(tmp_path / "_commits"))
    log.record("q", 0, [])
    first = for_log(log, load_config({}))
    assert for_log(CommitLog(log.uri), load_config({"commitLogCheckpointInterval": 5})) is first
    assert first.config.commitLogCheckpointInterval == 5
    held = _checkpoint_lock(log)
    try:
        report = maintain(log, load_config({}))
        assert report.checkpoint is None and "another process is checkpointing" in report.line()
    finally:
        os.close(held)
    assert maintain(log, load_config({})).checkpoint == f"{0:020d}.json"


def test_a_log_elsewhere_than_a_local_disk_is_not_checkpointed(tmp_path):
    from sparkjournal.config import load_config
    from sparkjournal.maintenance.log_checkpointer import maintain
    log = CommitLog(str(tmp_path / "_commits"))
    log.record("q", 0, [])
    log.local = False                  # as on hdfs:// or s3://: no atomic rename over a file
    report = maintain(log, load_config({}))
    assert "is not on a local file system: its entries are all kept" in report.line()
    assert not os.path.exists(tmp_path / "_commits" / CHECKPOINTS)


def test_writer_names_of_the_logs_own_are_refused():
    from sparkjournal.config import SINK
    from sparkjournal.errors import ConfigError
    for name in ("_checkpoints", "batch-write-0123", "a/b"):
        with pytest.raises(ConfigError, match="not starting with '_' or 'batch-write-'"):
            SINK["txnAppId"].parse(name)
    assert SINK["txnAppId"].parse("nightly-load") == "nightly-load"
