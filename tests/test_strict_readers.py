"""Every reader of JSON on disk reads it as JSON.md defines it: a value of the
wrong type (a batch "12", a tx 3.0, a count true, a name null), a name twice
or NaN is the structure's own error naming what was wrong, never coerced; a
newer format is refused before anything else; a file laid out differently
(whitespace, name order) with the same values reads the same."""
from __future__ import annotations

import json
import logging
import os

import pyarrow as pa
import pytest

from sparkjournal import Journal
from sparkjournal.errors import CorruptJournalError, FormatVersionError
from sparkjournal.events.commit_log import CommitLog, CommitLogError
from sparkjournal.events.forgotten import ForgottenNodeError
from sparkjournal.events.forgotten import parse as parse_forgotten
from sparkjournal.events.log_checkpoint import CheckpointDamage, Checkpoint
from sparkjournal.events.log_checkpoint import parse as parse_checkpoint
from sparkjournal.events.pruning import META_STATS, Comparison, Predicate, read_stats
from sparkjournal.events.requests import REQUESTS, RequestError, pending
from sparkjournal.events.xid import MAGIC, BatchXid
from sparkjournal.format.codec import CODEC
from sparkjournal.format.strict_json import canonical
from sparkjournal.journal.swap import CONTROL_FILE, ControlFile, read_control

ENTRY = {"format": 1, "query": "q", "batch": 3, "committed_at_ms": 1000,
         "txs": [{"node": "n@h", "lane": "lane-000", "tx": 7, "host": "h", "root": "/r",
                  "rows": 2, "bytes": 10, "records": 1}]}


def write_entry(base, data) -> str:
    os.makedirs(base / "q", exist_ok=True)
    path = base / "q" / f"{3:020d}.json"
    path.write_bytes(data if isinstance(data, bytes) else json.dumps(data).encode())
    return str(path)


def with_tx(**fields) -> dict:
    return {**ENTRY, "txs": [{**ENTRY["txs"][0], **fields}]}


def test_an_entry_laid_out_otherwise_reads_as_the_writer_wrote_it(tmp_path):
    write_entry(tmp_path, json.dumps(ENTRY, indent=3).encode())
    found = CommitLog(str(tmp_path)).decision("q", 3)
    assert (found.query, found.batch, found.rows, found.epoch, found.aborted) == ("q", 3, 2, 0, False)


@pytest.mark.parametrize("data, named", [
    ({**ENTRY, "batch": "3"}, '"batch" must be an integer'),
    ({**ENTRY, "batch": 3.0}, '"batch" must be an integer'),
    ({**ENTRY, "committed_at_ms": True}, '"committed_at_ms" must be an integer'),
    ({**ENTRY, "query": 5}, '"query" must be a string'),
    ({**ENTRY, "epoch": None}, '"epoch" must be an integer'),
    ({**ENTRY, "aborted": 0}, '"aborted" must be true or false'),
    ({**ENTRY, "format": "1"}, '"format" must be an integer from 1 to 1'),
    (with_tx(tx="7"), '"tx" must be an integer'),
    (with_tx(rows=2.0), '"rows" must be an integer'),
    (with_tx(host=None), '"host" must be a string'),
    (with_tx(bytes=-1), '"bytes" must be an integer'),
    (json.dumps(ENTRY).replace('"batch": 3', '"batch": 3, "batch": 3').encode(),
     'names "batch" twice'),
    (json.dumps(ENTRY).replace('"committed_at_ms": 1000', '"committed_at_ms": NaN').encode(),
     "holds NaN"),
], ids=["batch-string", "batch-float", "time-bool", "query-number", "epoch-null",
        "aborted-zero", "format-string", "tx-string", "rows-float", "host-null",
        "bytes-negative", "batch-twice", "nan"])
def test_an_entry_with_a_value_python_would_coerce_is_a_commit_log_error(tmp_path, data, named):
    path = write_entry(tmp_path, data)
    with pytest.raises(CommitLogError) as failure:
        CommitLog(str(tmp_path)).decision("q", 3)
    assert path in str(failure.value) and named in str(failure.value)
    assert "Restore it from a backup" in str(failure.value)


def test_an_entry_of_a_newer_format_is_refused_before_its_damaged_fields(tmp_path):
    path = write_entry(tmp_path, {"format": 2, "batch": "not even a number"})
    with pytest.raises(FormatVersionError) as failure:
        CommitLog(str(tmp_path)).decision("q", 3)
    assert failure.value.path == path and failure.value.found == 2


def test_an_xid_of_this_sink_with_a_mistyped_field_is_left_to_its_owner_and_logged(caplog):
    good = BatchXid("/log", "q", 12, 3, 0, 99, 1, 5000)
    assert BatchXid.decode(good.encode()) == good
    bad = json.dumps({"kind": MAGIC, "log": "/log", "query": "q", "batch": "12"}).encode()
    with caplog.at_level(logging.WARNING, logger="sparkjournal.xid"):
        assert BatchXid.decode(bad) is None
        assert BatchXid.decode(bad) is None
    reported = [r.getMessage() for r in caplog.records if "not of its shape" in r.getMessage()]
    assert len(reported) == 1 and '"batch" must be an integer' in reported[0]


@pytest.mark.parametrize("raw", [
    b"opaque bytes of another application", b'{"kind": "other-2pc", "batch": "x"}', b"[1]",
    b'{"kind": "sparkjournal-2pc", "kind": "sparkjournal-2pc", "log": "l", "query": "q", '
    b'"batch": 1}',
    b'{"kind": "sparkjournal-2pc", "log": "l", "query": "q", "batch": 1, "task": NaN}',
], ids=["not-json", "other-kind", "not-an-object", "kind-twice", "nan"])
def test_an_xid_that_is_not_json_as_json_md_defines_it_is_not_ours(raw):
    assert BatchXid.decode(raw) is None


def test_an_xid_outside_spark_keeps_its_negative_partition_and_task():
    outside = BatchXid("/log", "q", 0)
    assert (outside.partition, outside.task) == (-1, -1)
    assert BatchXid.decode(outside.encode()) == outside


CHECKPOINT = Checkpoint(4, 1000)


def checkpoint_with(**changes) -> bytes:
    data = json.loads(CHECKPOINT.to_json())
    data["lanes"] = [{"node": "n@h", "host": "h", "root": "/r", "lane": "lane-000",
                      "batches": 1, "rows": 2, "committed": [[1, 2]]}]
    data["nodes"] = [{"node": "n@h", "batches": 1, "rows": 2}]
    for name, value in changes.items():
        where, _, field = name.partition("__")
        if field:
            data[where][0][field] = value
        else:
            data[where] = value
    return json.dumps(data).encode()


def test_a_checkpoint_laid_out_otherwise_reads_the_same():
    made = parse_checkpoint(json.dumps(json.loads(checkpoint_with()), indent=2).encode(), "c", 4)
    assert made.seq == 4 and made.lanes[("n@h", "lane-000")].committed == [[1, 2]]
    assert made.nodes["n@h"].bytes == 0                      # optional, absent: 0


@pytest.mark.parametrize("changes, named", [
    ({"seq": "4"}, '"seq" must be an integer'),
    ({"written_at_ms": 1e3}, '"written_at_ms" must be an integer'),
    ({"lanes__batches": True}, '"batches" must be an integer'),
    ({"lanes__root": None}, '"root" must be a string'),
    ({"lanes__committed": [[1, 2.0]]}, "committed must be [first, last] pairs"),
    ({"nodes__bytes": "10"}, '"bytes" must be an integer'),
    ({"queries": {"q": 1}}, '"queries" must be a list'),
    ({"nodes": [["n@h", 1, 2]]}, "each of nodes must be an object"),
    ({"queries": [{"query": "batch/write-1", "through": 0, "decided": 1, "rows": 1,
                   "last_committed_at_ms": 5}]}, "cannot name a folder"),
    ({"nodes__rows": 2**63}, '"rows" must be an integer from 0 to 9223372036854775807'),
], ids=["seq-string", "time-float", "batches-bool", "root-null", "range-float",
        "bytes-string", "queries-object", "node-list", "query-not-a-folder", "rows-past-a-whole"])
def test_a_checkpoint_with_a_mistyped_field_is_damaged_naming_it(changes, named):
    with pytest.raises(CheckpointDamage) as failure:
        parse_checkpoint(checkpoint_with(**changes), "_checkpoints/x.json", 4)
    assert "_checkpoints/x.json" in str(failure.value) and named in str(failure.value)


FORGOTTEN = {"format": 1, "node": "n@h", "forgotten_at_ms": 1, "batches": 2, "rows": 3,
             "bytes": 4, "lanes": ["lane-000"]}


@pytest.mark.parametrize("data, named", [
    ({**FORGOTTEN, "rows": "3"}, '"rows" must be an integer'),
    ({**FORGOTTEN, "node": None}, '"node" must be a string'),
    ({**FORGOTTEN, "lanes": [0]}, "lanes must be a list of lane names"),
    ({**FORGOTTEN, "format": True}, '"format" must be an integer'),
], ids=["rows-string", "node-null", "lane-number", "format-bool"])
def test_a_forgotten_node_record_with_a_mistyped_field_is_a_forgotten_node_error(data, named):
    with pytest.raises(ForgottenNodeError) as failure:
        parse_forgotten(json.dumps(data).encode(), "_forgotten/n@h.json", "n@h")
    assert "_forgotten/n@h.json" in str(failure.value) and named in str(failure.value)
    assert "delete it to restore the node" in str(failure.value)


@pytest.mark.parametrize("raw, named", [
    (b'{"format": 1, "kind": ["delete"]}', '"kind" must be a string'),
    (b'{"format": "1", "kind": "delete"}', '"format" must be an integer'),
    (b'{"format": 1, "kind": "delete", "kind": "page"}', 'names "kind" twice'),
], ids=["kind-list", "format-string", "kind-twice"])
def test_a_lane_request_with_a_mistyped_envelope_is_a_request_error(lane, raw, named):
    os.makedirs(os.path.join(lane, REQUESTS))
    path = os.path.join(lane, REQUESTS, "00000000000000000001-x.json")
    with open(path, "wb") as handle:
        handle.write(raw)
    with pytest.raises(RequestError) as failure:
        pending(lane)
    assert path in str(failure.value) and named in str(failure.value)
    assert os.path.exists(path)


def control_of(lane: str) -> ControlFile:
    with Journal.open(lane, fileSize="16k", bufferSize="8k") as journal:
        journal.append_add(1, b"x")
    names = sorted(n for n in os.listdir(lane) if n.endswith(".sjd"))
    return ControlFile(1, tuple((n, i + 1) for i, n in enumerate(names)), ((names[0], 1),))


def write_control(lane: str, body: dict) -> None:
    with open(os.path.join(lane, CONTROL_FILE), "w", encoding="utf-8") as handle:
        json.dump({**body, "crc32c": CODEC.crc32c(canonical(body))}, handle, indent=4)


def test_a_control_file_laid_out_otherwise_reads_by_the_crc_of_its_values(lane):
    control = control_of(lane)
    body = control.body()
    write_control(lane, dict(reversed(list(body.items()))))
    assert read_control(lane) == control


@pytest.mark.parametrize("change, named", [
    ({"generation": "1"}, '"generation" must be an integer'),
    ({"old": [["../data-1.sjd", 1]]}, "old must list [data file name, file id] pairs"),
    ({"old": [["data-1.sjd", True]]}, "old must list [data file name, file id] pairs"),
    ({"new": [["data-9.sjd", 9]]}, "new files that are not among the old ones"),
], ids=["generation-string", "name-a-path", "id-bool", "new-not-old"])
def test_a_control_file_with_a_right_crc_over_wrong_values_is_damaged(lane, change, named):
    body = {**control_of(lane).body(), **change}
    write_control(lane, body)
    with pytest.raises(CorruptJournalError) as failure:
        read_control(lane)
    assert CONTROL_FILE in str(failure.value) and named in str(failure.value)


def stats_metadata(raw: bytes) -> dict:
    return {META_STATS: raw}


@pytest.mark.parametrize("raw, kept", [
    (b'{"x": [1, 5], "y": [1, 5], "x": [1, 5]}', {}),
    (b'{"x": [NaN, 5]}', {}),
    (b'{"x": [1, 5, 7], "y": ["a", 2], "z": [true, false], "w": null, "v": [1, 5]}',
     {"v": [1, 5]}),
    (b"[1, 5]", {}),
], ids=["name-twice", "nan", "bad-bounds", "not-an-object"])
def test_refused_stats_leave_the_record_or_column_unpruned(raw, kept):
    stats = read_stats(stats_metadata(raw))
    assert stats == kept
    schema = pa.schema([("x", pa.int64()), ("y", pa.int64()), ("v", pa.int64())])
    outside = Predicate((Comparison("x", ">", 100), Comparison("y", ">", 100)))
    assert outside.may_match({}, stats, schema)              # nothing rules the record out
    assert not Predicate((Comparison("v", ">", 100),)).may_match({}, {"v": [1, 5]}, schema)


def test_an_entry_name_past_a_whole_number_is_no_entry():
    from sparkjournal.events.commit_log import parse_entry_name
    assert parse_entry_name("09223372036854775807.json") == (2**63 - 1, 0)
    assert parse_entry_name("09223372036854775808.json") is None
    assert parse_entry_name("18446744073709551615.json") is None
    assert parse_entry_name("00000000000000000003.9223372036854775808.json") is None
    assert parse_entry_name("5.json") is None and parse_entry_name("5.1.json") is None


def test_a_checkpoint_name_not_of_20_digits_or_past_a_whole_number_is_no_checkpoint(tmp_path):
    from sparkjournal.events.log_view import checkpoint_names
    folder = tmp_path / "_checkpoints"
    folder.mkdir()
    for name in ("00000000000000000002.json", "00000000000000000010.json", "9.json",
                 "18446744073709551615.json", "0000000000000000000x.json", "00000000000000000011.tmp"):
        (folder / name).write_bytes(b"{}")
    assert checkpoint_names(CommitLog(str(tmp_path))) == ["00000000000000000010.json",
                                                          "00000000000000000002.json"]
