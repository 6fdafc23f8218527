"""Fuzz target: the small files beside the data files.

Input: a selector byte, then the file's bytes. Selector (low 2 bits):
0 a deletion vector body (deletions.py), 1 a lane request file (requests.py,
read as the reader and the writer see pending deletes), 2 the compaction
control file compact.ctl (swap.py; bit 7 of the selector fixes up its CRC so
the fields behind it are reached), 3 a commit log decision (commit_log.py).

Properties: what decodes encodes again to the same thing; a decoded
deletion vector names ascending unique positions (or all rows); a decision's
transactions are usable (their references and row counts read).
"""
from __future__ import annotations

import os

from tests.fuzz.common import allowed, atheris, run, temp_dir
from tests.fuzz.lane_image import fix_control_crc

with atheris.instrument_imports(include=["sparkjournal"]):
    from sparkjournal.events.commit_log import CommitLog, Decision
    from sparkjournal.events.deletions import Deletions, decode_vector, encode_vector
    from sparkjournal.events.lane_deletes import pending_deletions
    from sparkjournal.events.requests import REQUESTS, pending
    from sparkjournal.journal.swap import ControlFile, lane_view, read_control

ALLOWED = allowed()


def deletion_vector(raw: bytes) -> None:
    try:
        target, positions = decode_vector(raw)
    except ALLOWED:
        return
    Deletions().add_vector(raw)
    if positions is None:
        assert decode_vector(encode_vector(target, None))[1] is None
        return
    listed = positions.to_pylist()
    if listed == sorted(set(listed)) and raw[5:8] == bytes(3):    # no flags, reserved 0
        assert encode_vector(target, listed) == raw, "a canonical vector did not round-trip"


def lane_request(raw: bytes) -> None:
    with temp_dir("sj-fuzz-req-") as lane:
        os.makedirs(os.path.join(lane, REQUESTS))
        with open(os.path.join(lane, REQUESTS, "00000000000000000001-fuzz.json"), "wb") as handle:
            handle.write(raw)
        try:
            found = pending(lane)
        except ALLOWED:
            return
        assert len(found) == 1 and isinstance(found[0][1], dict)
        try:
            pending_deletions(lane)
        except ALLOWED:
            pass


def control_file(raw: bytes) -> None:
    try:
        control = ControlFile.decode(raw, "fuzzed/compact.ctl")
    except ALLOWED:
        return
    assert ControlFile.decode(control.encode(), "re-encoded") == control
    with temp_dir("sj-fuzz-ctl-") as lane:
        with open(os.path.join(lane, "compact.ctl"), "wb") as handle:
            handle.write(raw)
        for name, _file_id in control.new[:1]:
            open(os.path.join(lane, name), "wb").close()
        assert read_control(lane) == control
        try:
            lane_view(lane)
        except ALLOWED:
            pass


def decision(raw: bytes) -> None:
    with temp_dir("sj-fuzz-log-") as base:
        os.makedirs(os.path.join(base, "q"))
        with open(os.path.join(base, "q", f"{7:020d}.json"), "wb") as handle:
            handle.write(raw)
        log = CommitLog(base)
        try:
            found = log.decision("q", 7)
            found.tx_refs()
            found.rows
        except ALLOWED:
            return
        assert log.batches("q") == [7]
        again = Decision.from_json(found.to_json(), "re-encoded")
        assert again.to_json() == found.to_json(), (again, found)


TARGETS = (deletion_vector, lane_request, control_file, decision)


def test_one_input(data: bytes) -> None:
    if not data:
        return
    selector, raw = data[0], data[1:]
    target = TARGETS[selector & 3]
    if target is control_file and selector & 0x80:
        raw = fix_control_crc(raw)
    target(raw)


if __name__ == "__main__":
    run(test_one_input)
