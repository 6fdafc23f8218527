"""The sparkjournal command line, run through main([...]) on real journals in
tmp_path (no mocks of the disk). Timings are printed by the tools, never asserted."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from sparkjournal import Journal
from sparkjournal.cli import paths
from sparkjournal.cli.main import main
from sparkjournal.config import JOURNAL
from sparkjournal.journal.datafile import MappedFile, read_header
from sparkjournal.spark import connector
from sparkjournal.tools.bench.report import PAIRED

from conftest import NATIVE_BUILT, NATIVE_MISSING_REASON

SMALL = {"fileSize": "64k", "bufferSize": "8k"}      # files roll after ~60 records of 1000 bytes


def make_lane(lane, records=100, body_size=1000, large=False, prepared=False, **options):
    """A closed lane: records 1..n (user type = id % 7), one update, one delete,
    optionally a large body (record 9000) and a prepared transaction (tx 77)."""
    with Journal.open(str(lane), **{**SMALL, **options}) as journal:
        for record_id in range(1, records + 1):
            journal.append_add(record_id, bytes([record_id % 251]) * body_size,
                               user_type=record_id % 7, sync=False)
        journal.append_update(2, b"updated", user_type=5, sync=False)
        journal.append_delete(3, sync=False)
        if large:
            journal.append_add(9000, os.urandom(70_000), user_type=9)   # > fileSize: large/
        if prepared:
            journal.append_add_tx(77, 5000, b"in a prepared tx", 4)
            journal.append_update_tx(77, 1, b"prepared update", 2)
            journal.append_delete_tx(77, 4)
            journal.prepare(77, b"xid-77")
        journal.flush()
    return str(lane)


def contents(lane):
    with Journal.read(str(lane)) as snapshot:
        records = {r.record_id: (r.user_type, bytes(r.body)) for r in snapshot.records()}
        prepared = sorted((t.tx_id, t.xid, t.record_ids) for t in snapshot.prepared())
    return records, prepared


def data_files(lane):
    """[(path, header, record offsets)] in file id order."""
    found = []
    for name in sorted(os.listdir(lane)):
        if name.endswith(".sjd"):
            path = os.path.join(lane, name)
            header = read_header(path)
            mapped = MappedFile(path)
            scan = mapped.scan(header.file_id, True)
            found.append((path, header, list(scan.offsets)[:scan.n]))
            mapped.close()
    return sorted(found, key=lambda f: f[1].file_id)


def flip_byte(path, offset):
    with open(path, "r+b") as handle:
        handle.seek(offset)
        value = handle.read(1)[0]
        handle.seek(offset)
        handle.write(bytes([value ^ 0xFF]))


# --- inspect --------------------------------------------------------------------------------
def test_inspect_shows_files_live_records_transactions_and_large_bodies(tmp_path, capsys):
    make_lane(tmp_path / "root" / "lane-000", large=True, prepared=True)
    assert main(["inspect", str(tmp_path / "root")]) == 0
    out = capsys.readouterr().out
    assert "lane lane-000" in out
    assert "data-0000000001.sjd" in out
    assert "live          100 records" in out          # 1..100 and 9000, minus deleted 3
    assert "1 prepared, 0 open" in out
    assert "xid " + b"xid-77".hex() in out
    assert "large bodies  1," in out and "record 9000" in out
    assert "writer        not locked" in out


def test_inspect_json_counts_live_records_and_a_live_ratio_below_one(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000", large=True, prepared=True)
    assert main(["inspect", lane, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (described,) = report["lanes"]
    assert described["live_records"] == 100
    assert described["transactions"]["prepared"] == 1
    assert described["large_bodies"]["count"] == 1
    assert described["large_bodies"]["list"][0]["record_id"] == 9000
    assert 0 < described["live_ratio"] < 1                  # the update and delete left dead bytes
    in_use = [f for f in described["files"] if f["state"] == "in use"]
    assert len(in_use) >= 2 and sum(f["records"] for f in in_use) >= 100
    assert sum(f["live_records"] for f in in_use) == 100


def test_inspect_names_the_process_holding_the_writer_lock(tmp_path, capsys):
    lane = str(tmp_path / "lane-000")
    with Journal.open(lane, **SMALL) as journal:
        journal.append_add(1, b"x")
        assert main(["inspect", lane]) == 0
    assert f"locked by process {os.getpid()}" in capsys.readouterr().out


def test_inspect_says_the_writer_is_unknown_where_the_lock_table_is_hidden(tmp_path, capsys,
                                                                           monkeypatch):
    lane = make_lane(tmp_path / "lane-000", records=10)
    hidden = tmp_path / "locks"
    hidden.write_text("")                          # what a sandbox that hides /proc/locks shows
    monkeypatch.setattr(paths, "LOCK_TABLE", str(hidden))
    assert main(["inspect", lane]) == 0
    assert "writer        unknown" in capsys.readouterr().out
    assert main(["inspect", lane, "--json"]) == 0
    (described,) = json.loads(capsys.readouterr().out)["lanes"]
    assert described["writer"] == {"locked": None, "pid": None}


def test_inspect_lists_attic_and_archive_contents(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000")
    for folder, name in (("attic", "data-0000000099.sjd"), ("archive", "data-0000000098.sjd")):
        os.makedirs(os.path.join(lane, folder))
        with open(os.path.join(lane, folder, name), "wb") as handle:
            handle.write(b"\0" * 100)
    assert main(["inspect", lane]) == 0
    out = capsys.readouterr().out
    assert "attic         1 files" in out and "data-0000000099.sjd" in out
    assert "archive       1 files" in out and "data-0000000098.sjd" in out


# --- verify ---------------------------------------------------------------------------------
def test_verify_clean_journal_exits_0(tmp_path, capsys):
    root = tmp_path / "root"
    make_lane(root / "lane-000", large=True, prepared=True)
    make_lane(root / "lane-001", records=10)
    assert main(["verify", str(root)]) == 0
    out = capsys.readouterr().out
    assert "lane lane-000:" in out and "lane lane-001:" in out
    assert "1 large bodies: clean" in out
    assert out.rstrip().endswith("clean")


def test_verify_flipped_byte_in_sealed_file_exits_1_naming_file_and_offset(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000")
    (sealed, _header, offsets), *_newer = data_files(lane)
    assert _newer, "the journal must have rolled past its first file"
    flip_byte(sealed, offsets[10] + 40 + 7)                 # inside record 11's body
    assert main(["verify", lane]) == 1
    out = capsys.readouterr().out
    assert f"CORRUPT   {sealed} offset {offsets[10]}: crc mismatch" in out
    assert "opening this lane fails with" in out
    assert "CORRUPT (1 damaged region)" in out


def test_verify_reports_every_damaged_record_not_only_the_first(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000")
    sealed, _header, offsets = data_files(lane)[0]
    for index in (5, 20, 40):
        flip_byte(sealed, offsets[index] + 100)
    assert main(["verify", lane]) == 1
    out = capsys.readouterr().out
    for index in (5, 20, 40):
        assert f"{sealed} offset {offsets[index]}:" in out
    assert "3 damaged regions" in out


def test_verify_torn_tail_of_newest_file_is_reported_but_exits_0(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000")
    newest, _header, offsets = [f for f in data_files(lane) if f[2]][-1]   # the newest with data
    flip_byte(newest, offsets[-3] + 50)                     # later records are within the sync window
    assert main(["verify", lane]) == 0
    out = capsys.readouterr().out
    assert f"TORN TAIL {newest} offset {offsets[-3]}" in out
    assert "CORRUPT" not in out
    with Journal.read(lane) as snapshot:                    # the loader agrees: a torn tail
        assert snapshot.report.torn_tail.offset == offsets[-3]


def test_verify_reports_a_damaged_header_that_the_loader_would_only_skip(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000")
    sealed, _header, _offsets = data_files(lane)[0]
    flip_byte(sealed, 30)                                   # inside the header's file size field
    assert main(["verify", lane]) == 1
    assert f"CORRUPT   {sealed} offset 0: file header: header checksum mismatch" in capsys.readouterr().out


def test_verify_detects_a_damaged_large_body(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000", large=True)
    body_dir = os.path.join(lane, "large")
    (name,) = os.listdir(body_dir)
    flip_byte(os.path.join(body_dir, name), 1234)
    assert main(["verify", lane]) == 1
    out = capsys.readouterr().out
    assert os.path.join(body_dir, name) in out and "checksum mismatch (record 9000)" in out


def test_verify_prints_progress_with_a_percentage_to_stderr(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000")
    assert main(["verify", lane, "--progress-mb", "0"]) == 0
    err = capsys.readouterr().err
    assert "verify: 100.0 % (" in err and "files" in err


# --- export / import ------------------------------------------------------------------------
def test_export_import_round_trip_keeps_ids_user_types_bodies_and_prepared_txs(tmp_path, capsys):
    root = tmp_path / "root"
    make_lane(root / "lane-000", large=True, prepared=True)
    make_lane(root / "lane-001", records=30, body_size=50)
    exported = tmp_path / "export.jsonl"
    assert main(["export", str(root), "-o", str(exported)]) == 0
    assert main(["import", str(exported), str(tmp_path / "copy")]) == 0
    for lane in ("lane-000", "lane-001"):
        assert contents(tmp_path / "copy" / lane) == contents(root / lane)
    records, prepared = contents(tmp_path / "copy" / "lane-000")
    assert records[2] == (5, b"updated") and 3 not in records and 9000 in records
    assert prepared == [(77, b"xid-77", [5000, 1, 4])]
    assert "import: lane-001" in capsys.readouterr().err


def test_export_writes_json_lines_with_a_header_to_stdout(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000", records=3, prepared=True)
    assert main(["export", lane]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0] == {"format": "sparkjournal-export", "version": 1, "lanes": ["lane-000"]}
    assert [line["record_id"] for line in lines if line.get("kind") == "record"] == [1, 2]
    (tx,) = [line for line in lines if line.get("kind") == "prepared"]
    assert tx["tx_id"] == 77 and [r["op"] for r in tx["records"]] == ["add", "update", "delete"]


def test_import_refuses_a_lane_that_already_holds_records(tmp_path, capsys):
    lane = make_lane(tmp_path / "root" / "lane-000", records=5)
    exported = tmp_path / "export.jsonl"
    assert main(["export", str(tmp_path / "root"), "-o", str(exported)]) == 0
    before = contents(lane)
    assert main(["import", str(exported), str(tmp_path / "root")]) == 1
    assert "import only into empty lanes" in capsys.readouterr().err
    assert contents(lane) == before


def test_import_of_a_file_that_is_not_an_export_is_a_usage_error(tmp_path, capsys):
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    assert main(["import", str(other), str(tmp_path / "root")]) == 2
    err = capsys.readouterr().err
    assert "is not a sparkjournal export" in err and len(err.strip().splitlines()) == 1


def test_import_names_the_line_with_bad_base64(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"format": "sparkjournal-export", "version": 1, "lanes": ["lane-000"]}) + "\n"
                   + json.dumps({"kind": "record", "lane": "lane-000", "record_id": 1, "user_type": 0,
                                 "body": "not base64!"}) + "\n")
    assert main(["import", str(bad), str(tmp_path / "root")]) == 1
    assert f"{bad} line 2: field 'body' is not base64" in capsys.readouterr().err


# --- perf-journal and bench -----------------------------------------------------------------
def test_perf_journal_prints_rate_buffer_timeout_and_write_cache(tmp_path, capsys):
    assert main(["perf-journal", str(tmp_path), "--rounds", "2", "--writes", "20"]) == 0
    out = capsys.readouterr().out
    assert out.count("writes/s") >= 3
    (timeout_line,) = [line for line in out.splitlines() if line.startswith("bufferTimeout ")]
    assert JOURNAL["bufferTimeout"].parse(timeout_line.split()[1]) > 0   # config accepts it
    assert "write cache: " in out
    assert os.listdir(tmp_path) == []                       # the test file is gone


@pytest.mark.skipif(not NATIVE_BUILT, reason=NATIVE_MISSING_REASON)
def test_bench_journal_quick_prints_a_table_and_writes_json(tmp_path, capsys):
    results = tmp_path / "bench.json"
    assert main(["bench", "journal", "--quick", "--dir", str(tmp_path), "--json", str(results)]) == 0
    out = capsys.readouterr().out
    assert "commit_4k ASYNCIO" in out and "load Journal.read" in out
    assert "PASS" in out or "MISS" in out
    rows = json.loads(results.read_text())
    assert {"commit_4k ASYNCIO", "commit_4k NIO", "throughput_64k NIO", "arrow_10k ASYNCIO",
            "threads_8x1k ASYNCIO", "threads_8x1k floor, 2 syncs in flight", "batch_100b NIO",
            "load Journal.read"} <= {r["name"] for r in rows}
    jvm_rows = {"commit_4k JVM", "throughput_64k JVM", "arrow_10k JVM"}     # the JVM appender
    no_jvm = connector.jar_unavailable()
    for row in rows:
        assert {"name", "value", "unit", "baseline", "ratio", "target"} <= set(row)
        if row["name"] in jvm_rows and no_jvm:
            assert row["value"] is None and row["skipped"].startswith("no JVM appender: ")
        else:
            assert row["value"] > 0
    table = {line.split("  ")[0]: line for line in out.splitlines()}
    for name in jvm_rows:
        (row,) = [r for r in rows if r["name"] == name]
        assert row["target"] == (0.85 if name.startswith("commit") else 0.9)
        if not no_jvm:               # measured beside the raw loop: a paired ratio, in the table too
            assert row["baseline"] > 0 and row["ratio"] > 0 and row["ratio_of"] == PAIRED
            assert f"{row['ratio']:.2f}" in table[name].split()
        assert table[name].rstrip().endswith("SKIP" if no_jvm else ("PASS", "MISS"))
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"]   # its working folder is removed


def test_latency_targets_pass_at_or_below_their_bound():
    from sparkjournal.tools.bench.report import BenchResult, render_table
    within = BenchResult("p99", 4.0, "ms", 2.0, 2.0, "max_ratio")
    over = BenchResult("p99", 4.1, "ms", 2.0, 2.0, "max_ratio")
    stall = BenchResult("stall", 120.0, "ms", 3.0, 100.0, "max_value")
    assert within.passed and not over.passed and not stall.passed
    table = render_table([within, stall])
    assert "<= 2x" in table and "<= 100" in table


def test_reported_figures_have_no_target_and_are_not_counted_as_met(capsys):
    from sparkjournal.tools.bench.report import REPORTED, BenchResult, print_report
    floor = BenchResult("floor", 3.9, "x", 1.0, 0.0, REPORTED)
    missed = BenchResult("journal", 2.0, "x", 1.0, 4.0, "ratio")
    assert floor.passed is None and floor.as_json()["target"] is None
    print_report([missed, floor], None)
    out = capsys.readouterr().out
    assert "0 of 1 targets met" in out
    floor_row = next(line for line in out.splitlines() if line.startswith("floor"))
    assert "PASS" not in floor_row and "MISS" not in floor_row and floor_row.rstrip().endswith("-")


def test_threads_seconds_raises_a_thread_error_after_every_thread_ended():
    from sparkjournal.tools.bench.support import threads_seconds
    ended = []

    def work(index):
        ended.append(index)
        if index == 2:
            raise OSError(28, "no space left")
    with pytest.raises(OSError, match="no space left"):
        threads_seconds(4, work)
    assert sorted(ended) == [0, 1, 2, 3]
    together = threading.Barrier(3, timeout=60)     # broken unless all three run at once
    threads_seconds(3, lambda index: together.wait())
    assert together.n_waiting == 0 and not together.broken


def test_bench_maintenance_quick_compaction_prints_ratios_and_writes_json(tmp_path, capsys):
    results = tmp_path / "bench.json"
    assert main(["bench", "maintenance", "--quick", "--only", "compaction", "--dir", str(tmp_path),
                 "--json", str(results)]) == 0
    out = capsys.readouterr().out
    assert "compaction vs plain copy, 4.0 KiB records" in out and "rewrite" in out
    rows = json.loads(results.read_text())
    assert [r["name"] for r in rows] == [
        "compaction vs plain copy, 4.0 KiB records, no rate limit",
        "compaction vs plain copy, 256.0 KiB records, no rate limit",
        "compaction vs plain copy, 256.0 KiB records, at maintenanceBytesPerSecond=200.0 MiB"]
    for row in rows[:2]:
        assert row["value"] > 0 and row["baseline"] > 0 and row["target_of"] == "ratio"
        assert row["pass"] == (row["ratio"] >= 0.5)
    assert rows[2]["value"] > 0 and rows[2]["target_of"] == "reported"     # at the default limit
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"]   # its working folder is removed



def test_bench_maintenance_quick_writer_latency_measures_compaction_and_paging(tmp_path, capsys):
    results = tmp_path / "bench.json"
    assert main(["bench", "maintenance", "--quick", "--only", "writer_latency", "--dir",
                 str(tmp_path), "--json", str(results)]) == 0
    assert "writer p99 commit latency, paging running" in capsys.readouterr().out
    rows = {r["name"]: r for r in json.loads(results.read_text())}
    limit = "maintenanceBytesPerSecond=200.0 MiB (the default)"
    paging = rows[f"writer p99 commit latency, paging running at {limit}"]["detail"]
    assert "page files written beside the writer" in paging and "paging, no rate limit: p50" in paging
    for what in ("compaction", "paging"):
        p99 = rows[f"writer p99 commit latency, {what} running at {limit}"]
        assert p99["value"] > 0 and p99["baseline"] > 0 and p99["target_of"] == "max_ratio"
        assert p99["pass"] == (p99["ratio"] <= 2.0)
        assert rows[f"writer p99 commit latency, {what} running with no rate limit"]["value"] > 0
        assert rows[f"writer longest stall, {what} running at {limit}"]["target_of"] == "max_value"
    assert [p.name for p in tmp_path.iterdir()] == ["bench.json"]   # its working folder is removed

# --- errors and entry points ----------------------------------------------------------------
@pytest.mark.parametrize("argv, message", [
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["inspect"], "the following arguments are required: PATH"),
    (["verify", "/no/such/journal"], "/no/such/journal does not exist"),
    (["perf-journal", "/tmp", "--rounds", "0"], "expected a whole number above 0"),
    (["bench"], "the following arguments are required: BENCH"),
])
def test_bad_arguments_exit_2_with_one_clear_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_folder_without_a_journal_is_a_usage_error(tmp_path, capsys):
    assert main(["inspect", str(tmp_path)]) == 2
    assert "holds no journal" in capsys.readouterr().err


def test_corrupt_journal_fails_export_with_one_line_and_status_1(tmp_path, capsys):
    lane = make_lane(tmp_path / "lane-000")
    sealed, _header, offsets = data_files(lane)[0]
    flip_byte(sealed, offsets[3] + 60)
    assert main(["export", lane, "-o", str(tmp_path / "out.jsonl")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("sparkjournal export: error: journal file") and f"offset {offsets[3]}" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "out.jsonl").exists()


def test_python_dash_m_sparkjournal_runs_the_same_tool():
    done = subprocess.run([sys.executable, "-m", "sparkjournal", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "perf-journal" in done.stdout
