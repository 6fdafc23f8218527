"""The Python reader and both codecs give the golden lane corpus's readings
(tests/golden/lanes/, written by its generate.py, FORMAT.md): for every case,
a read-only snapshot (Journal.read) of a copy of the lane lists the live
records with their bodies, the prepared and open transactions, what the load
reports and the watermarks expected.json states, or fails with the error its
kind names, naming the file (and offset, where given); each data file scans
as stated with the Python codec and with the C one (skipped when it is not
built); each live PAGE record names its page file, whose rows are stated.
The checked-in files are never opened for writing: each case is copied."""
from __future__ import annotations

import importlib.util
import json
import os
import shutil

import pytest

from sparkjournal import Journal
from sparkjournal.errors import CorruptJournalError, FormatVersionError
from sparkjournal.events.page_records import live_page_records
from sparkjournal.format import codec_python, layout

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden", "lanes")
CASES = sorted(name for name in os.listdir(GOLDEN) if os.path.isdir(os.path.join(GOLDEN, name))
               and name != "__pycache__")
ERRORS = {"damaged": CorruptJournalError, "newer-format": FormatVersionError}
READING = ("records", "prepared", "open_transactions", "report", "max_record_id", "max_tx_id",
           "pending_swap")


def expected_of(case: str) -> dict:
    with open(os.path.join(GOLDEN, case, "expected.json"), encoding="utf-8") as handle:
        return json.load(handle)


def copied(case: str, tmp_path) -> str:
    target = str(tmp_path / "lane")
    shutil.copytree(os.path.join(GOLDEN, case, "lane"), target)
    return target


def body_view(raw: bytes) -> dict:
    import hashlib
    return {"hex": raw.hex()} if len(raw) <= 64 else {"sha256": hashlib.sha256(raw).hexdigest()}


def reading(lane: str, pages: bool) -> tuple[dict, list]:
    """Journal.read's reading in expected.json's form, and the files named by
    the errors reading bodies raised."""
    failed = []
    with Journal.read(lane) as snap:
        records = []
        for record in snap.records():
            entry = {"id": record.record_id, "user_type": record.user_type, "large": record.large}
            try:
                raw = bytes(record.body)
                entry.update(size=len(raw), **body_view(raw))
            except CorruptJournalError as error:
                entry["error"] = "damaged"
                failed.append(os.path.relpath(error.path, lane))
            records.append(entry)
        report, torn = snap.report, snap.report.torn_tail
        found = {
            "records": records,
            "prepared": [{"tx_id": p.tx_id, "xid": p.xid.hex(), "record_ids": p.record_ids}
                         for p in snap.prepared()],
            "open_transactions": [{"tx_id": tx, "record_ids": ids}
                                  for tx, ids in snap.open_transactions().items()],
            "report": {"torn_tail": None if torn is None else {
                "file": os.path.relpath(torn.file, lane), "offset": torn.offset,
                "records_dropped": torn.records_dropped, "bytes_dropped": torn.bytes_dropped},
                "broken_tx_ids": list(report.broken_tx_ids),
                "prepared_tx_ids": list(report.prepared_tx_ids),
                "skipped": sorted(os.path.basename(w.split(": ")[0]) for w in report.warnings)},
            "max_record_id": snap.max_record_id, "max_tx_id": snap._state.max_tx_id,
            "pending_swap": pending_swap(snap, lane),
        }
        if pages:                                # an events lane: user type 3 is PAGE
            found["pages"] = [{"record_id": record_id, "name": ref.name, "size": ref.size,
                               "crc32c": ref.crc32c, "rows": ref.rows,
                               "record_ids": list(ref.record_ids)}
                              for record_id, ref in live_page_records(snap)]
    return found, failed


def pending_swap(snap, lane: str):
    generation, pending = snap._generation
    if not pending:
        return None
    from sparkjournal.journal.swap import read_control
    control = read_control(lane)
    assert control.generation == generation
    return {"generation": generation, "old": [list(p) for p in control.old],
            "new": [list(p) for p in control.new]}


def scanned(codec, lane: str, stated: dict) -> dict:
    """The file's scan by ``codec`` (from 4096, CRCs checked), in expected.json's form."""
    with open(os.path.join(lane, stated["file"]), "rb") as handle:
        raw = handle.read()
    s = codec.scan(raw, layout.FILE_HEADER_SIZE, layout.file_id32(stated["file_id"]), True)
    return {"file": stated["file"], "file_id": stated["file_id"], "n": s.n, "n_clean": s.n_clean,
            "clean_end": s.clean_end, "first_foreign": s.first_foreign,
            "foreign_reason": s.foreign_reason,
            "records": [[int(s.types[i]), int(s.flags[i]), int(s.user_types[i]),
                         int(s.record_ids[i]), int(s.tx_ids[i]), int(s.offsets[i]),
                         int(s.body_lens[i]), int(s.counts[i])] for i in range(s.n)]}


def test_the_corpus_holds_every_kind_of_case_the_spec_names():
    cases = {case: expected_of(case) for case in CASES}
    assert {"plain", "transactions", "broken-count", "reused", "free-by-header", "torn-tail",
            "damaged-sealed", "skipped-headers", "wrong-size", "newer-format", "version-1",
            "large", "large-damaged", "swap-pending", "control-damaged", "control-newer",
            "pages", "damage-past-window", "torn-nothing", "short-of-previous-end",
            "compacted-damaged", "stale-own-id", "control-not-json", "control-no-crc",
            "control-list", "control-nan", "control-duplicate-name", "control-absent-file",
            "control-generation-string", "control-generation-float", "recovered",
            "pages-deleted", "page-record-damaged", "page-wrong-size"} <= set(cases)
    assert {e["outcome"] for e in cases.values()} == {"ok", "damaged", "newer-format"}
    assert any(e.get("report", {}).get("torn_tail") for e in cases.values())
    assert any(e.get("report", {}).get("broken_tx_ids") for e in cases.values())
    assert any(e.get("report", {}).get("skipped") for e in cases.values())
    assert any(e.get("pending_swap") for e in cases.values())
    assert any(r["large"] for e in cases.values() for r in e.get("records", []))
    assert any(e.get("prepared") and e.get("open_transactions") for e in cases.values())
    assert any(s["first_foreign"] > 0 and s["n"] == s["n_clean"] > 0
               for e in cases.values() for s in e["scans"]), "no file ends on stale records"


@pytest.mark.parametrize("case", [c for c in CASES if expected_of(c).get("error", {}).get("at") != "load"])
def test_python_reads_the_golden_lane_as_stated(case, tmp_path):
    expected = expected_of(case)
    found, failed = reading(copied(case, tmp_path), "pages" in expected)
    for key in READING + (("pages",) if "pages" in expected else ()):
        want = expected[key]
        if key == "pages":
            want = [{k: page[k] for k in ("record_id", "name", "size", "crc32c", "rows",
                                          "record_ids")} for page in want]
        assert found[key] == want, key
    if "error" in expected:                  # reading the bodies fails naming each file
        assert sorted(failed) == expected["error"]["files"]
    else:
        assert failed == []


@pytest.mark.parametrize("case", [c for c in CASES if expected_of(c).get("error", {}).get("at") == "load"])
def test_python_refuses_the_golden_lane_with_its_error_naming_the_file(case, tmp_path):
    error = expected_of(case)["error"]
    lane = copied(case, tmp_path)
    before = sorted(os.listdir(lane))
    with pytest.raises(ERRORS[error["kind"]]) as raised:
        Journal.read(lane).close()
    assert type(raised.value) is ERRORS[error["kind"]]
    if error["file"] is not None:                # null: the spec names no file for it
        assert raised.value.path == os.path.join(lane, error["file"])
    if error["offset"] is not None:
        assert raised.value.offset == error["offset"]
    assert sorted(n for n in os.listdir(lane) if n != "files.lock") == \
        sorted(n for n in before if n != "files.lock")          # nothing moved aside


def test_the_page_files_hold_the_stated_rows(tmp_path):
    import hashlib
    import pyarrow.parquet as pq
    spec = importlib.util.spec_from_file_location("pages_case", os.path.join(GOLDEN, "pages_case.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page_rows = module.page_rows
    lane = copied("pages", tmp_path)
    for page in expected_of("pages")["pages"]:
        path = os.path.join(lane, "pages", page["name"])
        assert os.path.getsize(path) == page["size"]
        with open(path, "rb") as handle:
            assert codec_python.crc32c(handle.read()) == page["crc32c"]
        assert pq.read_metadata(path).num_rows == page["rows"]
        rows = page_rows(path)
        assert rows == {k: page[k] for k in ("columns", "rows_sha256", "first_rows")}
        assert hashlib.sha256(b"").hexdigest() != rows["rows_sha256"]


@pytest.mark.parametrize("codec_name", ["python", "native"])
@pytest.mark.parametrize("case", CASES)
def test_every_data_file_of_the_golden_lane_scans_as_stated(case, codec_name, tmp_path):
    if codec_name == "native":
        codec = pytest.importorskip("sparkjournal.format.codec_native",
                                    reason="the C core is not built")
    else:
        codec = codec_python
    lane = copied(case, tmp_path)
    stated = expected_of(case)["scans"]
    assert stated
    assert [scanned(codec, lane, s) for s in stated] == stated


def recovery_reading(snap, lane: str) -> dict:
    found = {
        "records": [], "max_record_id": snap.max_record_id, "max_tx_id": snap._state.max_tx_id,
        "prepared": [{"tx_id": p.tx_id, "xid": p.xid.hex(), "record_ids": p.record_ids}
                     for p in snap.prepared()],
        "open_transactions": [{"tx_id": tx, "record_ids": ids}
                              for tx, ids in snap.open_transactions().items()],
        "recoveries": [{"file": os.path.relpath(r.file, lane), "offset": r.offset,
                        "lost_record_ids": r.lost_record_ids, "lost_tx_ids": r.lost_tx_ids}
                       for r in snap.report.recoveries]}
    for record in snap.records():
        raw = bytes(record.body)
        found["records"].append({"id": record.record_id, "user_type": record.user_type,
                                 "large": record.large, "size": len(raw), **body_view(raw)})
    return found


RECOVERY = ("records", "prepared", "open_transactions", "max_record_id", "max_tx_id", "recoveries")


def test_a_damaged_sealed_file_read_in_recovery_mode_is_left_out_and_what_it_held_reported(tmp_path):
    expected = expected_of("recovered")["recovery"]
    lane = copied("recovered", tmp_path)
    before = sorted(os.listdir(lane))
    with Journal.read(lane, recover=True) as snap:
        found = recovery_reading(snap, lane)
        assert [os.path.relpath(r.moved_to, lane) for r in snap.report.recoveries] == \
            [r["file"] for r in expected["recoveries"]]            # a reader moves nothing
    assert {key: found[key] for key in RECOVERY} == {key: expected[key] for key in RECOVERY}
    assert sorted(n for n in os.listdir(lane) if n != "files.lock") == \
        sorted(n for n in before if n != "files.lock")


def test_a_writer_in_recovery_mode_moves_the_damaged_sealed_file_to_the_attic(tmp_path):
    expected = expected_of("recovered")["recovery"]
    lane = copied("recovered", tmp_path)
    with Journal.open(lane, recover=True) as journal:
        assert [os.path.relpath(r.moved_to, lane) for r in journal.report.recoveries] == \
            expected["attic"]
        lost = [{"file": os.path.relpath(r.file, lane), "offset": r.offset,
                 "lost_record_ids": r.lost_record_ids, "lost_tx_ids": r.lost_tx_ids}
                for r in journal.report.recoveries]
        assert lost == expected["recoveries"]
    for moved in expected["attic"]:
        assert os.path.isfile(os.path.join(lane, moved))
    for gone in expected["recoveries"]:
        assert not os.path.exists(os.path.join(lane, gone["file"]))
    with Journal.read(lane) as snap:                 # what is left now loads as it is
        found = recovery_reading(snap, lane)
    assert found["records"] == expected["records"]


EVENT_CASES = [c for c in CASES if "events" in expected_of(c)]


@pytest.mark.parametrize("case", EVENT_CASES)
def test_python_reads_the_events_of_the_golden_lane_as_stated(case, tmp_path):
    """Deleted rows are the union of deletion vectors and pending delete
    requests; visible rows are the pages' and the live EVENTS records' less
    them; a PAGE record or a page file that is damaged fails the read."""
    import hashlib
    import pyarrow as pa
    from sparkjournal.events import event_records
    from sparkjournal.events.lane_deletes import lane_deletions, pending_deletions
    from sparkjournal.events.page_records import PageRecordError, live_pages
    from sparkjournal.events.page_scan import PageFileError, read_page
    stated = expected_of(case)["events"]
    lane = copied(case, tmp_path)
    columns = ["id", "payload", "_batch_id", "_record_id", "_row"]
    schema = pa.schema([("id", pa.int64()), ("payload", pa.string()), ("_batch_id", pa.int64()),
                        ("_record_id", pa.int64()), ("_row", pa.int32())])
    pending = pending_deletions(lane)
    with Journal.read(lane) as snap:
        def visible():
            deletions = lane_deletions(snap, pending)
            rows = []
            for ref in live_pages(snap):
                for batch in read_page(lane, ref, schema, deletions):
                    rows += [list(r) for r in zip(*(batch.column(c).to_pylist() for c in columns))]
            for record in snap.records():
                if record.user_type != event_records.EVENTS:
                    continue
                batch, _query, batch_id = event_records.read_body(bytes(record.body))
                kept = deletions.apply(batch, record.record_id)
                if kept is None:
                    continue
                positions = [i for i in range(batch.num_rows)
                             if not deletions.whole(record.record_id)
                             and i not in deletions.rows_of(record.record_id)]
                rows += [[i, p, batch_id, record.record_id, pos] for (i, p), pos in
                         zip(zip(kept.column("id").to_pylist(), kept.column("payload").to_pylist()),
                             positions)]
            return deletions, rows

        if stated["outcome"] != "ok":
            error = stated["error"]
            expected_error = PageRecordError if error["what"] == "PAGE record" else PageFileError
            with pytest.raises(expected_error) as raised:
                visible()
            if "file" in error:
                assert error["file"] in str(raised.value)
            return
        deletions, rows = visible()
    deleted = {}
    for record_id in sorted(deletions._rows):
        rows_of = deletions.rows_of(record_id)
        deleted[str(record_id)] = None if rows_of is None else sorted(rows_of)
    assert deleted == stated["deleted"]
    rows.sort(key=lambda row: (row[3], row[4]))
    assert len(rows) == stated["rows"]
    assert rows[:len(stated["first_rows"])] == stated["first_rows"]
    assert hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest() == \
        stated["rows_sha256"]
