"""Writes the golden commit log corpus: one folder per case beside this file,
each a commit log (``<case>/log/``) and the answers every reader of
format/COMMIT_LOG.md must give on it (``<case>/expected.json``).

Run by hand, and only when the commit log format changes (the checked-in
files are the corpus; no test runs this)::

    python tests/golden/commit_log/generate.py

The logs are written by the Python implementation's writing side:
``CommitLog.record`` under a fixed clock, ``log_checkpointer.checkpoint`` and
``expire`` with explicit times. Names, bytes and times are fixed, so two runs
write the same files (file modification times aside: readers never use them).
The answers are stated here, by the spec's rules, never computed by a reader.

Cases:

* ``plain``: entries only, as a log written before checkpoints.
* ``checkpointed``: three lanes on two nodes, losing attempts, two
  checkpoints, retention applied, entries after the newest checkpoint, a
  ``batch-write-*`` query folded and one not, a txnAppId query with a gap
  folded and a decision past a gap after the newest checkpoint (in the view:
  each query folder is listed), a query the checkpoints do not know with a
  gap.
* ``damaged-newest``: ``checkpointed`` with its newest checkpoint cut in half:
  the one before it stands in, every answer stays.
* ``damaged-both``: both checkpoints cut: no view can be read.
* ``newer-format``: the newest checkpoint says ``"format": 2``: refused.
* ``damaged-times``: a commit-time segment whose CRC is wrong, the entries of
  its folded batches deleted: their commit times fail naming the segment.

expected.json: ``outcomes`` ({query, batch, node, lane, tx, outcome, rule}:
the spec's rule that decides it), ``done``, ``committed_at_ms``, ``lanes``
(every committed lane, sorted by node then lane), ``last_decided`` (every
query of the view), and for a failing case ``error``: ``kind``
(format-version, damaged-checkpoint, damaged-times), ``names`` (the log file,
relative to the log, its message must contain) and ``answer``: "view" (no
answer can be given) or "committed_at_ms" with the query and batch asked.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
import types
from unittest import mock

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, CHECKOUT)

from sparkjournal.events import commit_log as commit_log_module  # noqa: E402
from sparkjournal.events.commit_log import CommitLog  # noqa: E402
from sparkjournal.maintenance import log_checkpointer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOG_ID = b"5a1c0ffee0ddba11c0ffee0ddba11c0f"
AT = 1764250000000                                   # decisions are committed whole seconds after it

N1 = "0a1b2c3d-0000-4000-8000-000000000001@host-a"
N2 = "0a1b2c3d-0000-4000-8000-000000000002@host-b"
ROOT = "/data/journal"
A, B, C = (N1, "lane-000"), (N1, "lane-001"), (N2, "lane-000")   # C's txs name no host, no root

Q = "5b0e6f7a-1c2d-4e3f-8a9b-0c1d2e3f4a5b"           # a streaming query id
T = "nightly-load"                                   # a txnAppId numbering its own batches
W = "batch-write-9f3c2a7d1e0b4c5a"                   # a DataSource batch write, folded
W2 = "batch-write-00ff00ff00ff00ff"                  # one decided after the newest checkpoint
L = "late-app"                                       # a txnAppId no checkpoint knows
NEVER = "never-written"

# (query, batch, seconds after AT, [(lane, tx id), ...]): the decisions, in
# the order the driver wrote them. Tx ids run per lane; the ones missing here
# were prepared and lost: Q1's A 2, Q2's C 3, T2's A 8 (batch 2 of T never
# decided), T4's B 5, Q6's A 12, T6's B 10 (never decided), L1's C 11 (never
# decided), Q8's A 16 and T8's B 11 (in flight).
BEFORE_FIRST_CHECKPOINT = [
    (Q, 0, 1, [(A, 1), (C, 1)]),
    (Q, 1, 2, [(A, 3), (B, 1)]),
    (T, 0, 3, [(A, 4), (C, 2)]),
    (Q, 2, 4, [(A, 5), (C, 4)]),
    (T, 1, 5, [(B, 2)]),
    (W, 0, 6, [(A, 6), (B, 3), (C, 5)]),
    (Q, 3, 7, [(A, 7)]),
    (T, 3, 8, [(A, 9), (B, 4)]),
]
FIRST_CHECKPOINT_AT = 10
BEFORE_SECOND_CHECKPOINT = [
    (Q, 4, 11, [(A, 10), (C, 6)]),
    (T, 4, 12, [(B, 6)]),
    (Q, 5, 13, [(A, 11), (B, 7), (C, 7)]),
]
SECOND_CHECKPOINT_AT = 15
AFTER_CHECKPOINTS = [
    (Q, 6, 16, [(A, 13), (C, 8)]),
    (T, 5, 17, [(B, 8)]),
    (Q, 7, 18, [(A, 14), (B, 9)]),
    (W2, 0, 19, [(C, 9)]),
    (T, 7, 20, [(A, 15)]),
    (L, 0, 21, [(C, 10)]),
    (L, 2, 22, [(C, 12)]),
]
# After the second checkpoint, retention deletes Q 0-2, T 0 and W 0 (with W's
# folder): T 1's entry is among T's newest 3 entries (1, 3, 4), so it stays.
RETAIN_BATCHES = 3


def at(seconds: int) -> int:
    return AT + seconds * 1000


def outcome(query, batch, lane, tx, found, rule) -> dict:
    return {"query": query, "batch": batch, "node": lane[0], "lane": lane[1], "tx": tx,
            "outcome": found, "rule": rule}


def done(query, batch, found) -> dict:
    return {"query": query, "batch": batch, "done": found}


def time_of(query, batch, value) -> dict:
    return {"query": query, "batch": batch, "committed_at_ms": value}


def lane(key, host, root, batches, node_batches) -> dict:
    return {"node": key[0], "lane": key[1], "host": host, "root": root, "batches": batches,
            "node_batches": node_batches}


PLAIN = {
    "outcomes": [
        outcome(Q, 0, A, 1, "committed", 1),
        outcome(T, 3, B, 4, "committed", 1),
        outcome(W, 0, C, 5, "committed", 1),
        outcome(Q, 1, A, 2, "aborted", 2),
        outcome(Q, 2, C, 3, "aborted", 2),
        outcome(T, 2, A, 8, "aborted", 4),
        outcome(Q, 4, A, 10, "undecided", 5),
        outcome(T, 4, B, 5, "undecided", 5),
    ],
    "done": [done(Q, 0, True), done(Q, 3, True), done(Q, 4, False), done(T, 2, True),
             done(T, 4, False), done(W, 0, True), done(NEVER, 0, False)],
    "committed_at_ms": [time_of(Q, 0, at(1)), time_of(T, 3, at(8)), time_of(W, 0, at(6)),
                        time_of(T, 2, None), time_of(Q, 4, None)],
    "lanes": [lane(A, "host-a", ROOT, 7, 8), lane(B, "host-a", ROOT, 4, 8),
              lane(C, "host-b", "", 4, 4)],
    "last_decided": {Q: 3, W: 0, T: 3},
}

CHECKPOINTED = {
    "outcomes": [
        outcome(Q, 6, A, 13, "committed", 1),
        outcome(Q, 7, B, 9, "committed", 1),
        outcome(T, 5, B, 8, "committed", 1),
        outcome(W2, 0, C, 9, "committed", 1),
        outcome(L, 2, C, 12, "committed", 1),
        outcome(T, 7, A, 15, "committed", 1),         # past the gap at 6, after the checkpoint
        outcome(Q, 6, A, 12, "aborted", 2),
        outcome(Q, 0, A, 1, "committed", 3),          # its entry deleted
        outcome(Q, 1, B, 1, "committed", 3),
        outcome(Q, 3, A, 7, "committed", 3),          # its entry kept, folded
        outcome(Q, 4, C, 6, "committed", 3),          # folded by the second checkpoint
        outcome(T, 0, C, 2, "committed", 3),
        outcome(W, 0, B, 3, "committed", 3),
        outcome(Q, 1, A, 2, "aborted", 3),            # a losing attempt, its entry deleted
        outcome(Q, 2, C, 3, "aborted", 3),
        outcome(T, 2, A, 8, "aborted", 3),            # the folded gap
        outcome(T, 4, B, 5, "aborted", 3),
        outcome(L, 1, C, 11, "aborted", 4),
        outcome(T, 6, B, 10, "aborted", 4),           # the gap after the checkpoint: 7 is decided
        outcome(Q, 8, A, 16, "undecided", 5),
        outcome(T, 8, B, 11, "undecided", 5),         # past T's last entry
    ],
    "done": [done(Q, 0, True), done(Q, 3, True), done(Q, 7, True), done(Q, 8, False),
             done(T, 2, True), done(T, 6, True), done(T, 7, True), done(T, 8, False),
             done(W, 0, True), done(W2, 0, True), done(L, 1, True), done(L, 3, False),
             done(NEVER, 0, False)],
    "committed_at_ms": [time_of(Q, 0, at(1)), time_of(Q, 3, at(7)), time_of(Q, 5, at(13)),
                        time_of(Q, 6, at(16)), time_of(Q, 8, None), time_of(T, 2, None),
                        time_of(T, 4, at(12)), time_of(T, 5, at(17)), time_of(T, 6, None),
                        time_of(W, 0, at(6)), time_of(W2, 0, at(19)), time_of(L, 1, None),
                        time_of(L, 2, at(22)), time_of(T, 7, at(20))],
    # T 6 and L 1 (gaps) and Q 8 are not decided: no commit time (COMMIT_LOG.md,
    # "Commit times").
    "lanes": [lane(A, "host-a", ROOT, 12, 15), lane(B, "host-a", ROOT, 8, 15),
              lane(C, "host-b", "", 10, 10)],
    "last_decided": {Q: 7, W2: 0, W: 0, L: 2, T: 7},
}


# Aborted batches written again: E ("events-to-journal") aborts batch 1 once and
# writes it again at epoch 1, then a checkpoint folds 0-1 (batch 2's abort
# entry is not folded: it stays in the view); batch 2 is aborted twice and
# committed at epoch 2; batch 3 is aborted and not written again yet. R
# ("rerun") aborts batch 4, then commits 5 (which aborts 4's later epochs).
E = "events-to-journal"
R = "rerun"
ABORTED_BEFORE_CHECKPOINT = [
    (E, 0, 0, 1, False, [(A, 1)]),
    (E, 1, 0, 2, True, []),
    (E, 1, 1, 3, False, [(A, 3)]),
    (E, 2, 0, 4, True, []),
]
ABORTED_AFTER_CHECKPOINT = [
    (E, 2, 1, 6, True, []),
    (E, 2, 2, 7, False, [(B, 7)]),
    (E, 3, 0, 8, True, []),
    (R, 4, 0, 9, True, []),
    (R, 5, 0, 10, False, [(C, 5)]),
]
ABORTED = {
    "outcomes": [
        {**outcome(E, 2, B, 7, "committed", 1), "epoch": 2},
        outcome(R, 5, C, 5, "committed", 1),
        {**outcome(E, 2, B, 8, "aborted", 1), "epoch": 2},      # a losing attempt of epoch 2
        outcome(E, 3, A, 9, "aborted", 1),                       # its epoch's abort entry
        outcome(R, 4, C, 4, "aborted", 1),
        outcome(E, 2, B, 5, "aborted", 2),                       # epochs 0 and 1 were aborted
        {**outcome(E, 2, B, 6, "aborted", 2), "epoch": 1},
        outcome(E, 0, A, 1, "committed", 3),
        {**outcome(E, 1, A, 3, "committed", 3), "epoch": 1},     # written again, folded
        outcome(E, 1, A, 2, "aborted", 3),                       # the aborted epoch, folded
        {**outcome(R, 4, C, 6, "aborted", 4), "epoch": 1},       # 5 is committed
        {**outcome(E, 3, A, 10, "undecided", 5), "epoch": 1},    # the next epoch, not decided
        outcome(E, 4, A, 11, "undecided", 5),
    ],
    "done": [done(E, 0, True), done(E, 1, True), done(E, 2, True), done(E, 3, False),
             done(E, 4, False), done(R, 4, True), done(R, 5, True), done(R, 6, False)],
    "write_epochs": [{"query": E, "batch": 3, "write_epoch": 1},
                     {"query": E, "batch": 4, "write_epoch": 0},
                     {"query": R, "batch": 6, "write_epoch": 0}],
    "committed_at_ms": [time_of(E, 0, at(1)), time_of(E, 1, at(3)), time_of(E, 2, at(7)),
                        time_of(E, 3, None), time_of(R, 4, None), time_of(R, 5, at(10))],
    "lanes": [lane(A, "host-a", ROOT, 2, 3), lane(B, "host-a", ROOT, 1, 3),
              lane(C, "host-b", "", 1, 1)],
    "last_decided": {E: 2, R: 5},
}


def record_epochs(log: CommitLog, entries) -> None:
    for query, batch, epoch, seconds, aborted, txs in entries:
        named = [{"node": node, "lane": lane_name, "tx": tx, "rows": 10,
                  **({"host": "host-a", "root": ROOT} if node == N1 else {})}
                 for (node, lane_name), tx in txs]
        with clock_at(at(seconds)):
            log.record(query, batch, named, epoch=epoch, aborted=aborted)


def write_aborted(folder: str) -> None:
    log = CommitLog(folder)
    log.write_bytes(f"{log.base}/LOG_ID", LOG_ID)
    record_epochs(log, ABORTED_BEFORE_CHECKPOINT)
    assert log_checkpointer.checkpoint(log, now_ms=at(5))[0] == f"{0:020d}.json"
    record_epochs(log, ABORTED_AFTER_CHECKPOINT)


def forget_host_b(folder: str) -> None:
    """Node N2 (host-b) forgotten, as `sparkjournal nodes --forget` records it."""
    from sparkjournal.events import forgotten
    record = forgotten.ForgottenNode(N2, at(30), 10, 100, 0, ("lane-000",))
    assert forgotten.forget(CommitLog(folder), record)


def forgotten_answers() -> dict:
    """Checkpointed's answers with N2's lane left out of the committed lanes,
    and what reads leave out: N2's 10 batches, 100 rows (10 rows a tx)."""
    answers = json.loads(json.dumps(CHECKPOINTED))
    answers["lanes"] = [entry for entry in answers["lanes"] if entry["node"] != N2]
    answers["forgotten"] = {"nodes": [N2], "batches": 10, "events": 100}
    return answers


def damaged_times_answers() -> dict:
    """Checkpointed's answers but the commit times of Q's folded batches (its segment 0)."""
    answers = json.loads(json.dumps(CHECKPOINTED))
    answers["committed_at_ms"] = [entry for entry in answers["committed_at_ms"]
                                  if not (entry["query"] == Q and entry["batch"] <= 5)]
    answers["error"] = {"kind": "damaged-times", "names": f"_times/{Q}/{0:020d}.times",
                        "answer": "committed_at_ms", "query": Q, "batch": 0}
    return answers


@contextlib.contextmanager
def clock_at(ms: int):
    """CommitLog.record's clock reads ``ms``."""
    with mock.patch.object(commit_log_module, "time", types.SimpleNamespace(time=lambda: ms / 1000)):
        yield


def record(log: CommitLog, decisions) -> None:
    for query, batch, seconds, txs in decisions:
        named = []
        for (node, lane_name), tx in txs:
            entry = {"node": node, "lane": lane_name, "tx": tx, "rows": 10}
            if node == N1:
                entry.update(host="host-a", root=ROOT)
            named.append(entry)
        with clock_at(at(seconds)):
            log.record(query, batch, named)


def write_plain(folder: str) -> None:
    log = CommitLog(folder)
    log.write_bytes(f"{log.base}/LOG_ID", LOG_ID)
    record(log, BEFORE_FIRST_CHECKPOINT)


def write_checkpointed(folder: str) -> None:
    log = CommitLog(folder)
    log.write_bytes(f"{log.base}/LOG_ID", LOG_ID)
    record(log, BEFORE_FIRST_CHECKPOINT)
    assert log_checkpointer.checkpoint(log, now_ms=at(FIRST_CHECKPOINT_AT))[0] == f"{0:020d}.json"
    record(log, BEFORE_SECOND_CHECKPOINT)
    assert log_checkpointer.checkpoint(log, now_ms=at(SECOND_CHECKPOINT_AT))[0] == f"{1:020d}.json"
    deleted = log_checkpointer.expire(log, RETAIN_BATCHES, 3600 * 10**9, now=time.time() + 7200)
    assert deleted == (5, 0, 0), deleted
    record(log, AFTER_CHECKPOINTS)


def cut_in_half(path: str) -> None:
    with open(path, "rb") as handle:
        raw = handle.read()
    with open(path, "wb") as handle:
        handle.write(raw[:len(raw) // 2])


def checkpoint_file(folder: str, seq: int) -> str:
    return os.path.join(folder, "_checkpoints", f"{seq:020d}.json")


def damage_newest(folder: str) -> None:
    cut_in_half(checkpoint_file(folder, 1))


def damage_both(folder: str) -> None:
    cut_in_half(checkpoint_file(folder, 0))
    cut_in_half(checkpoint_file(folder, 1))


def make_newer(folder: str) -> None:
    path = checkpoint_file(folder, 1)
    with open(path, "rb") as handle:
        data = json.loads(handle.read())
    data["format"] = 2
    with open(path, "wb") as handle:
        handle.write(json.dumps(data, sort_keys=True, separators=(",", ":")).encode())


def damage_times(folder: str) -> None:
    path = os.path.join(folder, "_times", Q, f"{0:020d}.times")
    with open(path, "rb") as handle:
        raw = bytearray(handle.read())
    raw[-1] ^= 0xFF
    with open(path, "wb") as handle:
        handle.write(bytes(raw))


CASES = {
    "plain": (write_plain, None, PLAIN),
    "checkpointed": (write_checkpointed, None, CHECKPOINTED),
    "damaged-newest": (None, damage_newest, CHECKPOINTED),
    "damaged-both": (None, damage_both, {"error": {
        "kind": "damaged-checkpoint", "names": f"_checkpoints/{1:020d}.json", "answer": "view"}}),
    "newer-format": (None, make_newer, {"error": {
        "kind": "format-version", "names": f"_checkpoints/{1:020d}.json", "answer": "view"}}),
    "damaged-times": (None, damage_times, damaged_times_answers()),
    "aborted": (write_aborted, None, ABORTED),
    "forgotten": (None, forget_host_b, forgotten_answers()),
}


def listed(expected: dict) -> str:
    """expected.json's text: one answer a line."""
    parts = []
    for key, value in expected.items():
        if isinstance(value, list):
            items = ",\n".join(f"  {json.dumps(item)}" for item in value)
            parts.append(f" {json.dumps(key)}: [\n{items}\n ]")
        else:
            parts.append(f" {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main() -> None:
    for case, (write, damage, expected) in CASES.items():
        folder = os.path.join(HERE, case)
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        log_folder = os.path.join(folder, "log")
        if write is not None:
            write(log_folder)
        else:
            shutil.copytree(os.path.join(HERE, "checkpointed", "log"), log_folder)
            damage(log_folder)
        with open(os.path.join(folder, "expected.json"), "w", encoding="utf-8") as handle:
            handle.write(listed(expected))


if __name__ == "__main__":
    main()
