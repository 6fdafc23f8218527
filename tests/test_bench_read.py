"""``sparkjournal bench read`` at a tiny size: it runs, prints its rows with
targets and ratios, writes them as JSON, measures the JVM reader beside the
Python source when the connector's jar can be built (and marks its rows
skipped, saying why, when not), and removes its working folder. No timing is
asserted: a benchmark's figures are not a test's business."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sparkjournal.tools.bench.report import BenchResult, print_report, skipped

KEYS = {"name", "value", "unit", "baseline", "ratio", "ratio_of", "target", "target_of", "pass",
        "detail", "skipped"}


def test_a_skipped_row_keeps_its_name_and_target_and_says_why(tmp_path, capsys):
    missing = skipped("jvm vs parquet", "rows/s", 1.0, "no JVM reader: no javac on PATH")
    measured = BenchResult("python vs parquet", 2.0, "rows/s", 1.0, 1.5, "ratio")
    assert missing.passed is None and missing.ratio is None
    print_report([measured, missing], str(tmp_path / "rows.json"))
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("jvm vs parquet"))
    assert row.rstrip().endswith("SKIP") and ">= 1x" in row
    assert "jvm vs parquet: no JVM reader: no javac on PATH" in out
    assert "1 of 1 targets met; 1 rows skipped" in out
    entry = json.loads((tmp_path / "rows.json").read_text())[1]
    assert entry["skipped"] == "no JVM reader: no javac on PATH"
    assert entry["value"] is None and entry["pass"] is None and entry["target"] == 1.0


def test_a_verdict_judges_the_ratio_as_the_json_shows_it(tmp_path):
    # 0.49996 is shown as 0.5: the row meets a 0.5 target in the JSON and after reading it back
    met = BenchResult("compaction vs copy", 1.0, "MB/s", 1.0, 0.5, "ratio", paired=0.49996)
    missed = BenchResult("compaction vs copy", 1.0, "MB/s", 1.0, 0.5, "ratio", paired=0.49994)
    print_report([met, missed], str(tmp_path / "rows.json"))
    saved = json.loads((tmp_path / "rows.json").read_text())
    assert [(row["ratio"], row["pass"]) for row in saved] == [(0.5, True), (0.4999, False)]
    assert [BenchResult.from_json(row).passed for row in saved] == [True, False]


def test_report_markdown_is_the_saved_rows_with_ratio_target_and_state(tmp_path, capsys):
    from sparkjournal.cli.main import main
    rows = [BenchResult("jvm vs parquet", 2.5, "rows/s", 2.0, 1.0, "ratio", "two lanes"),
            BenchResult("p99 beside compaction", 3.0, "ms", 1.0, 2.0, "max_ratio"),
            BenchResult("python vs floor", 1.0, "rows/s", 4.0, 0.0, "reported"),
            skipped("jvm stream", "rows/s", 1.0, "no JVM reader: no javac on PATH")]
    saved = tmp_path / "rows.json"
    print_report(rows, str(saved))
    capsys.readouterr()
    assert main(["bench", "report", str(saved), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "| jvm vs parquet | 2.50 rows/s | 2.00 rows/s | 1.25 | ≥ 1× | met |" in out
    assert "| p99 beside compaction | 3.00 ms | 1.00 ms | 3.00 | ≤ 2× | missed |" in out
    assert "| python vs floor | 1.00 rows/s | 4.00 rows/s | 0.25 | – | reported |" in out
    assert "| jvm stream | – | – | – | ≥ 1× | skipped: no JVM reader: no javac on PATH |" in out
    assert "- jvm vs parquet: two lanes" in out


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    pytest.importorskip("pyspark")
    from sparkjournal.spark import jvm_build
    folder = tmp_path_factory.mktemp("bench-read")
    results = folder / "read.json"
    done = subprocess.run(
        [sys.executable, "-m", "sparkjournal.cli.main", "bench", "read", "--events", "4000",
         "--small-batches", "2", "--repeats", "1", "--dir", str(folder), "--json", str(results),
         "--master", "local[2]"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-5000:]
    return done.stdout, json.loads(results.read_text()), folder, jvm_build.jvm_unavailable()


@pytest.mark.slow
def test_bench_read_prints_every_row_with_its_target_and_writes_json(bench_run):
    out, rows, folder, _missing = bench_run
    names = [row["name"] for row in rows]
    for expected in ("read full scan, 4,000 events, with metadata columns, vs python floor",
                     "read full scan, 4,000 events, JVM reader default read (all columns), "
                     "vs parquet",
                     "read full scan, 4,000 events, JVM reader default read, vs parquet of the "
                     "same 11 columns",
                     "read full scan, 4,000 events, JVM reader, the event columns parquet holds, "
                     "vs parquet",
                     "read groupBy(key).agg(sum), 4,000 events, JVM reader default read (all "
                     "columns asked, Spark prunes to (key, amount)), vs parquet",
                     "read groupBy(key).agg(sum), 4,000 events, JVM reader vs Python source, "
                     "both default read",
                     "read groupBy(key).agg(sum), 4,000 events, JVM reader default read, vs "
                     "parquet written without dictionary encoding",
                     "stream catch-up over 4,000 events, JVM stream, vs file stream source",
                     "stream catch-up over 4,000 events, JVM stream, vs file stream source of the "
                     "same 11 columns",
                     "stream catch-up over 4,000 events, JVM stream vs Python stream",
                     "stream catch-up over 4,000 events, Python stream, vs file stream source",
                     "read after 2 micro-batches of 1k: agg vs parquet sink output",
                     "read after 2 micro-batches of 1k: agg, JVM reader, vs parquet sink output",
                     "read after 2 micro-batches of 1k: agg, JVM reader vs Python source"):
        assert expected in names
        assert expected in out                       # the table has the same rows
    for row in rows:
        assert set(row) == KEYS, row["name"]
        if row["skipped"] is None:
            assert row["value"] > 0 and row["baseline"] > 0 and row["ratio"] > 0, row
    targets = {row["name"]: row["target"] for row in rows}
    assert targets["read full scan, 4,000 events, JVM reader default read (all columns), "
                   "vs parquet"] == 1.0
    assert targets["read after 2 micro-batches of 1k: agg, JVM reader, vs parquet sink "
                   "output"] == 5.0
    assert targets["stream catch-up over 4,000 events, JVM stream, vs file stream source"] == 1.0
    assert "targets met" in out
    assert [p.name for p in folder.iterdir()] == ["read.json"]      # its working folder is removed


@pytest.mark.slow
def test_bench_read_measures_the_jvm_reader_or_says_why_not(bench_run):
    out, rows, _folder, missing = bench_run
    jvm_rows = [row for row in rows if "JVM reader" in row["name"]]
    assert len(jvm_rows) == 9
    if missing:
        assert f"no JVM reader: {missing}" in out
        assert all(row["skipped"] == f"no JVM reader: {missing}" for row in jvm_rows)
    else:
        assert all(row["skipped"] is None and row["ratio"] > 0 for row in jvm_rows)
        assert all(row["pass"] in (True, False) for row in jvm_rows if row["target_of"] == "ratio")
