"""What a newer sparkjournal wrote is refused with FormatVersionError ("written
by a newer sparkjournal (format N, this reads up to M): upgrade"), never misread
and never changed: a compaction control file, a lane request, a deletion vector
and a commit log entry. (A data file header of a newer version:
test_journal_format_recovery.py::test_newer_format_version_is_refused.)"""
from __future__ import annotations

import json
import os

import pytest

from sparkjournal import Journal
from sparkjournal.errors import FormatVersionError
from sparkjournal.events.commit_log import FORMAT as LOG_FORMAT, CommitLog
from sparkjournal.events.deletions import DELETION_VECTOR, HEAD, MAGIC, VERSION as DV_VERSION
from sparkjournal.events.lane_deletes import lane_deletions
from sparkjournal.events.requests import FORMAT as REQUEST_FORMAT, carry_out, pending, submit
from sparkjournal.format.codec import CODEC
from sparkjournal.journal.datafile import is_data_file_name, read_header
from sparkjournal.journal.swap import CONTROL_FILE, CONTROL_FORMAT
from sparkjournal.maintenance.compactor import compact_lane

OPTIONS = {"fileSize": "64k", "bufferSize": "16k", "minFiles": 2}


def folder_bytes(folder: str) -> dict:
    found = {}
    for where, _dirs, files in os.walk(folder):
        for name in files:
            if not name.endswith(".lock"):
                with open(os.path.join(where, name), "rb") as handle:
                    found[os.path.relpath(os.path.join(where, name), folder)] = handle.read()
    return found


def assert_refused(caught, path_part: str, what: str, found: int, supported: int) -> None:
    error = caught.value
    assert (error.what, error.found, error.supported) == (what, found, supported)
    assert path_part in error.path
    assert (f"written by a newer sparkjournal (format {found}, this reads up to {supported}): "
            f"upgrade") in str(error)


def small_lane(lane: str, count: int = 50) -> None:
    """``count`` records of 1 kB: 200 fill several 64k files."""
    with Journal.open(lane, **OPTIONS) as journal:
        for record_id in range(1, count):
            journal.append_add(record_id, b"%d" % record_id * 500, user_type=1, sync=False)
        journal.flush()


def test_a_control_file_of_a_newer_format_is_refused_by_writer_reader_and_compactor(lane):
    small_lane(lane)
    names = [[name, read_header(os.path.join(lane, name)).file_id]
             for name in sorted(os.listdir(lane)) if is_data_file_name(name)]
    body = {"format": CONTROL_FORMAT + 1, "generation": 1, "old": names, "new": names[:1],
            "checksum": "computed some newer way"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":")).encode()
    with open(os.path.join(lane, CONTROL_FILE), "w", encoding="utf-8") as handle:
        json.dump({**body, "crc32c": CODEC.crc32c(canonical) ^ 1}, handle)
    before = folder_bytes(lane)
    for attempt in (lambda: Journal.open(lane, **OPTIONS), lambda: Journal.read(lane, **OPTIONS),
                    lambda: Journal.open(lane, recover=True, **OPTIONS),
                    lambda: compact_lane(lane, force=True, **OPTIONS)):
        with pytest.raises(FormatVersionError) as caught:
            attempt()
        assert_refused(caught, CONTROL_FILE, "compaction control file", CONTROL_FORMAT + 1,
                       CONTROL_FORMAT)
    assert folder_bytes(lane) == before and not os.path.exists(os.path.join(lane, "attic"))


def test_a_lane_request_of_a_newer_format_is_refused_and_left_in_place(lane):
    small_lane(lane)
    path = submit(lane, "delete", {"records": {"3": None}})
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"format": REQUEST_FORMAT + 1, "kind": "delete", "records": {"3": None}}, handle)
    with pytest.raises(FormatVersionError) as caught:
        pending(lane)
    assert_refused(caught, os.path.basename(path), "lane request", REQUEST_FORMAT + 1,
                   REQUEST_FORMAT)
    with Journal.open(lane, **OPTIONS) as journal:
        with pytest.raises(FormatVersionError):
            carry_out(journal, {"delete": lambda *_: pytest.fail("a newer request was carried out")})
        assert journal.get(3) is not None
    assert os.path.exists(path)


def test_a_deletion_vector_of_a_newer_version_is_refused_by_readers_and_compaction(lane):
    small_lane(lane, 200)
    newer = HEAD.pack(MAGIC, DV_VERSION + 1, 0, 0, 3, 0) + b"positions laid out anew"
    with Journal.open(lane, **OPTIONS) as journal:
        journal.append_add(1000, newer, user_type=DELETION_VECTOR)
        for record_id in range(2000, 2200):            # the vector's file gets sealed
            journal.append_add(record_id, bytes(1000), user_type=1, sync=False)
    with Journal.read(lane, **OPTIONS) as snapshot:
        with pytest.raises(FormatVersionError) as caught:
            lane_deletions(snapshot)
    assert_refused(caught, "record 1000", "deletion vector", DV_VERSION + 1, DV_VERSION)
    with pytest.raises(FormatVersionError):
        compact_lane(lane, force=True, events=True, **OPTIONS)
    with Journal.read(lane, **OPTIONS) as snapshot:       # nothing was rewritten
        assert bytes(snapshot.get(1000).body) == newer


def test_a_commit_log_entry_of_a_newer_format_is_refused(tmp_path):
    log = CommitLog(str(tmp_path / "_commits"))
    log.record("query-1", 0, [])
    path = tmp_path / "_commits" / "query-1" / f"{1:020d}.json"
    path.write_text(json.dumps({"format": LOG_FORMAT + 1, "query": "query-1", "batch": 1,
                                "committed_at_ms": 0, "txs": [], "new": "field"}))
    fresh = CommitLog(str(tmp_path / "_commits"))
    assert fresh.decision("query-1", 0) is not None
    with pytest.raises(FormatVersionError) as caught:
        fresh.decision("query-1", 1)
    assert_refused(caught, str(path), "commit log entry", LOG_FORMAT + 1, LOG_FORMAT)
