"""Crash test (Artemis's JournalCrashTest, harder): a child process appends
(plain adds / updates / deletes / batches, transactions that commit, roll back
or go through PREPARE) and logs each operation before the call and its
acknowledgement after the call returned (tests/crash_child.py). The parent
SIGKILLs it at a random moment, reopens the lane and requires:

* the live records equal exactly the acknowledged effects, plus or minus the
  one operation in flight when the child died (all of it or nothing of it: a
  transaction is atomic);
* an acknowledged PREPARE whose outcome was not acknowledged comes back as a
  prepared transaction with exactly its records;
* nothing rolled back, never committed, or never issued is visible.

The same lane is used for every kill, so each child starts from a recovered
lane (recovery of recovery), and some kills land while the child is opening.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from sparkjournal import Journal

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_child_module():
    # By path: works whatever pytest's import mode is.
    import importlib.util
    spec = importlib.util.spec_from_file_location("sj_crash_child", os.path.join(HERE, "crash_child.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


body = _load_child_module().body
REPO = os.path.dirname(HERE)
OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


def parse_log(text: str) -> list:
    """[(seq, kind, effect, acked)] from the child's stdout; a line cut by the
    kill (no newline) never happened as far as the parent can know."""
    ops, acked = {}, set()
    for line in text.split("\n")[:-1]:
        if line.startswith("I "):
            _, seq, rest = line.split(" ", 2)
            effect_start = rest.index("{")
            kind, effect = rest[:effect_start].strip(), json.loads(rest[effect_start:])
            ops[int(seq)] = (kind, {int(k): v for k, v in effect.items()})
        elif line.startswith("K "):
            acked.add(int(line.split()[1]))
    return [(seq, kind, effect, seq in acked) for seq, (kind, effect) in sorted(ops.items())]


class CrashChecker:
    def __init__(self, lane: str, backend: str, seed: int):
        self.lane, self.backend = lane, backend
        self.rng = random.Random(seed)
        self.known: dict[int, int] = {}          # record id -> version: certain state
        self.kills = 0

    def start_beside(self):
        """Starts work that runs beside the child until it is killed (none here;
        tests/test_compaction.py compacts and reads); returns what stop_beside takes."""
        return None

    def stop_beside(self, running) -> None:
        """Stops (and checks) what start_beside started, after the kill."""

    def run_seconds(self) -> float:
        """How long the child runs (after the random delay above) before the kill."""
        return 0.0

    def expected_bodies(self, state: dict) -> dict:
        return {record_id: body(record_id, version) for record_id, version in state.items()}

    def one_run(self, run: int) -> None:
        known_path = os.path.join(os.path.dirname(self.lane), "known.json")
        with open(known_path, "w") as handle:
            json.dump(sorted(self.known), handle)
        env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
        err_path = os.path.join(os.path.dirname(self.lane), "child.err")
        with open(err_path, "wb") as err_file:
            child = subprocess.Popen(
                [sys.executable, os.path.join(HERE, "crash_child.py"), self.lane, self.backend,
                 str(run), str(self.rng.randrange(1 << 30)), known_path],
                stdout=subprocess.PIPE, stderr=err_file, env=env, cwd=REPO)
        try:
            head = b""
            if self.rng.random() < 0.15:
                # Kill early: during start-up or inside Journal.open (recovery).
                time.sleep(self.rng.uniform(0.0, 0.8))
            else:
                head = child.stdout.readline()
                if head != b"READY\n":
                    child.wait()
                    raise AssertionError(f"child did not start: {head!r}\n"
                                         f"{open(err_path).read()}")
                time.sleep(self.rng.uniform(0.0, 0.4))
            beside = self.start_beside()
            try:
                time.sleep(self.run_seconds())
                os.kill(child.pid, signal.SIGKILL)
                # Through the same buffered reader as readline: it may hold read-ahead.
                out = head + child.stdout.read()
                child.wait()
            finally:
                self.stop_beside(beside)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
            child.stdout.close()
        assert child.returncode == -signal.SIGKILL, \
            f"child ended by itself ({child.returncode}):\n{open(err_path).read()}"
        self.kills += 1
        text = out.decode()
        if text.startswith("READY\n"):
            text = text[len("READY\n"):]
        self.verify(parse_log(text))

    def verify(self, ops: list) -> None:
        prepared: dict[int, dict] = {}           # acknowledged PREPAREs without an outcome
        doubt = None
        for seq, kind, effect, acked in ops:
            if not acked:
                assert seq == ops[-1][0], f"operation {seq} was not acknowledged but later ones were"
                doubt = (kind, effect)
                break
            words = kind.split()
            if words[0] == "prepare":
                prepared[int(words[1])] = effect
            elif words[0] == "rollback":
                pass
            else:
                if words[0] == "commit":
                    prepared.pop(int(words[1]), None)
                self.apply(self.known, effect)

        # The alternatives: the in-flight operation applied, or not; a batch of
        # plain adds is not atomic: any prefix of it (log order) may be durable.
        not_applied = dict(self.known)
        applied = dict(self.known)
        alternatives = [not_applied]
        if doubt is not None and doubt[0].split()[0] not in ("prepare", "rollback"):
            self.apply(applied, doubt[1])
            if doubt[0] == "batch":
                items = list(doubt[1].items())
                for k in range(1, len(items)):
                    partial = dict(self.known)
                    self.apply(partial, dict(items[:k]))
                    alternatives.append(partial)
            alternatives.append(applied)

        with Journal.open(self.lane, journalType=self.backend, **OPTIONS) as journal:
            report = journal.report
            assert report.recoveries == [], report.summary()
            assert report.broken_tx_ids == [], report.summary()
            assert report.attic == [], report.summary()
            found = {r.record_id: bytes(r.body) for r in journal.records()}
            assert all(r.user_type == 1 for r in journal.records())
            outcome = next((a for a in alternatives if found == self.expected_bodies(a)), None)
            if outcome is None:
                expected = self.expected_bodies(not_applied)
                missing = sorted(set(expected) - set(found))[:10]
                extra = sorted(set(found) - set(expected))[:10]
                wrong = sorted(r for r in set(found) & set(expected)
                               if found[r] != expected[r])[:10]
                raise AssertionError(
                    f"after kill {self.kills}: live records match neither alternative "
                    f"(in flight: {doubt}); missing {missing}, unexpected {extra}, "
                    f"wrong body {wrong}; {report.summary()}")
            self.known = outcome

            # Prepared transactions: every acknowledged PREPARE without an outcome,
            # and possibly the one in flight.
            got = {p.tx_id: (p.xid, list(p.record_ids)) for p in journal.prepared()}
            want = {tx: (f"xid-{tx}".encode(), list(effect)) for tx, effect in prepared.items()}
            if doubt is not None:
                words = doubt[0].split()
                tx = int(words[1]) if len(words) > 1 else None
                if words[0] == "prepare" and tx in got:
                    want[tx] = (f"xid-{tx}".encode(), list(doubt[1]))
                if words[0] == "commit" and tx in prepared and outcome is applied:
                    want.pop(tx)
            assert got == want, f"after kill {self.kills}: prepared {got} != {want}"
            all_prepared = dict(prepared)
            if doubt is not None and doubt[0].startswith("prepare") and int(doubt[0].split()[1]) in got:
                all_prepared[int(doubt[0].split()[1])] = doubt[1]
            for tx in got:
                if self.rng.random() < 0.5:
                    journal.commit(tx)
                    self.apply(self.known, all_prepared[tx])
                else:
                    journal.rollback(tx)
            assert journal.prepared() == []

    @staticmethod
    def apply(state: dict, effect: dict) -> None:
        for record_id, version in effect.items():
            if version is None:
                state.pop(record_id, None)
            else:
                state[record_id] = version

    def final_check(self) -> None:
        with Journal.read(self.lane, **OPTIONS) as snapshot:
            found = {r.record_id: bytes(r.body) for r in snapshot.records()}
            assert found == self.expected_bodies(self.known)
            assert snapshot.prepared() == []


def run_crashes(tmp_path, backend: str, kills: int, seed: int,
                checker_class: type = CrashChecker) -> CrashChecker:
    lane = str(tmp_path / "lane")
    checker = checker_class(lane, backend, seed)
    for run in range(kills):
        checker.one_run(run)
    checker.final_check()
    return checker


def test_kill_at_random_moments_loses_nothing_acknowledged(tmp_path, backend):
    checker = run_crashes(tmp_path, backend, kills=8, seed=20240 + len(backend))
    assert checker.kills == 8
    assert checker.known, "the children acknowledged nothing: the test exercised nothing"


@pytest.mark.slow
def test_kill_at_random_moments_loses_nothing_acknowledged_long(tmp_path, backend):
    checker = run_crashes(tmp_path, backend, kills=100, seed=777 + len(backend))
    assert checker.kills == 100
