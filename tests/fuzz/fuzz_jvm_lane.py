"""Fuzz target: the JVM's lane reader (LaneSnapshot: LaneLoader, RecordScan,
the control file, large bodies) on a whole mutated lane, beside Python's.

The input is the loader target's lane image (lane_image.py; its seeds are
corpus/loader/), options bit 0 recovery mode, bit 1 no CRC checks; the
writer bit is ignored (both sides read only). Python's Journal.read reads the
same folder first: its coverage guides the mutations (the JVM's is not seen
by libFuzzer). Java's answer must be "ok" or a refusal with an IOException
(jvm_driver.py); a refusal by one side only, or different records read, is a
finding too: the spec gives every lane one reading.
"""
from __future__ import annotations

import logging
from tests.fuzz.common import allowed, atheris, run, temp_dir, CRC
from tests.fuzz.jvm_driver import compare, driver, python_outcome
from tests.fuzz.lane_image import write_lane

with atheris.instrument_imports(include=["sparkjournal"]):
    from sparkjournal.journal.journal import Journal

logging.disable(logging.CRITICAL)        # the readers' warnings on damaged files: noise here
ALLOWED = allowed()


def record_item(record) -> str:
    head = f"{record.record_id}:{record.user_type}:{record.body_len}"
    try:
        body = bytes(record.body)
    except ALLOWED:
        return head + ":body-refused"
    return f"{head}:{len(body)}:{CRC(body)}"


def lane_digest(lane: str, recover: bool, checksum: bool) -> list[str]:
    with Journal.read(lane, recover=recover, checksum=checksum) as snap:
        digest = [record_item(r) for r in snap.records()]
        for tx in snap.prepared():
            digest.append(" ".join([f"prepared:{tx.tx_id}"] +
                                   [record_item(r) for r in snap.prepared_records(tx.tx_id)]))
        return digest


def test_one_input(data: bytes) -> None:
    if not data:
        return
    recover, checksum = bool(data[0] & 1), not data[0] & 2
    with temp_dir("sj-fuzz-jlane-") as lane:
        write_lane(data, lane)
        python = python_outcome(lambda: lane_digest(lane, recover, checksum), ALLOWED)
        java = driver().ask("lane", lane, str(int(recover)), str(int(checksum)))
        compare("jvm_lane", python, java)


if __name__ == "__main__":
    run(test_one_input)
