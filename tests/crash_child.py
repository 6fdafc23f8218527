"""Child process of tests/test_crash.py: appends to a lane until it is killed.

    python tests/crash_child.py LANE JOURNAL_TYPE RUN SEED KNOWN_IDS_JSON

Every operation is logged on stdout, one line each, flushed at once:

    I <seq> <kind> <json effect>    before the call: the operation is issued
    K <seq>                         after the call returned: it is acknowledged

``effect`` is what the operation does to the live records once applied:
{record id: version, or null for a delete}. Transactional records are not
logged (they have no effect until the COMMIT, whose effect lists them all); a
PREPARE's effect is what its later COMMIT will apply. Bodies are a function of
(record id, version), see ``body``. ``READY`` is printed once the journal is
open. Ids of run ``RUN`` start at (RUN + 1) * 10**7, so runs never reuse an id.
"""
from __future__ import annotations

import json
import random
import sys


def body(record_id: int, version: int) -> bytes:
    seed = f"{record_id}:{version}|".encode()
    size = 20_000 if (record_id * 31 + version) % 41 == 0 else 30 + (record_id + version) % 250
    return (seed * (size // len(seed) + 1))[:size]


def main() -> None:
    lane, journal_type, run, seed, known_path = sys.argv[1:6]
    run, rng = int(run), random.Random(int(seed))
    with open(known_path) as handle:
        live = set(json.load(handle))
    from sparkjournal import Journal
    journal = Journal.open(lane, journalType=journal_type, fileSize="64k", bufferSize="16k",
                           minFiles=2)
    out = sys.stdout
    print("READY", flush=True)
    base = (run + 1) * 10 ** 7
    next_id, next_tx, next_version, seq = base, base, base, 0

    def issue(kind: str, effect: dict) -> int:
        nonlocal seq
        seq += 1
        out.write(f"I {seq} {kind} {json.dumps(effect)}\n")
        out.flush()
        return seq

    def ack(number: int) -> None:
        out.write(f"K {number}\n")
        out.flush()

    kinds = ["add", "update", "delete", "batch", "tx"]
    while True:
        # Keep the lane's live set bounded: past 2000 records, deletes win.
        weights = [35, 15, 13, 5, 32] if len(live) < 2000 else [10, 15, 45, 2, 28]
        kind = rng.choices(kinds, weights)[0]
        next_version += 1
        version = next_version
        if kind == "add" or not live:
            record_id, next_id = next_id, next_id + 1
            n = issue("add", {record_id: version})
            journal.append_add(record_id, body(record_id, version), user_type=1)
            ack(n)
            live.add(record_id)
        elif kind == "update":
            record_id = rng.choice(sorted(live))
            n = issue("update", {record_id: version})
            journal.append_update(record_id, body(record_id, version), user_type=1)
            ack(n)
        elif kind == "delete":
            record_id = rng.choice(sorted(live))
            n = issue("delete", {record_id: None})
            journal.append_delete(record_id)
            ack(n)
            live.discard(record_id)
        elif kind == "batch":
            count = rng.randint(2, 30)
            ids = range(next_id, next_id + count)
            next_id += count
            n = issue("batch", {i: 0 for i in ids})
            journal.append_batch([body(i, 0) for i in ids], first_record_id=ids.start,
                                 user_type=1)
            ack(n)
            live.update(ids)
        else:
            tx_id, next_tx = next_tx, next_tx + 1
            effect = {}
            for _ in range(rng.randint(1, 5)):
                record_id, next_id = next_id, next_id + 1
                journal.append_add_tx(tx_id, record_id, body(record_id, version), user_type=1)
                effect[record_id] = version
            if rng.random() < 0.4:
                record_id = rng.choice(sorted(live))
                journal.append_update_tx(tx_id, record_id, body(record_id, version), user_type=1)
                effect[record_id] = version
            if rng.random() < 0.3:
                candidates = sorted(live - set(effect))
                if candidates:
                    record_id = rng.choice(candidates)
                    journal.append_delete_tx(tx_id, record_id)
                    effect[record_id] = None
            outcome = rng.random()
            if outcome < 0.15:
                n = issue(f"rollback {tx_id}", {})
                journal.rollback(tx_id)
                ack(n)
                continue
            if outcome < 0.35:
                n = issue(f"prepare {tx_id}", effect)
                journal.prepare(tx_id, xid=f"xid-{tx_id}".encode())
                ack(n)
            n = issue(f"commit {tx_id}", effect)
            journal.commit(tx_id)
            ack(n)
            for record_id, value in effect.items():
                (live.add if value is not None else live.discard)(record_id)


if __name__ == "__main__":
    main()
