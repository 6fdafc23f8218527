"""``sparkjournal bench report JSON... --out FILE``: the tables of saved benchmark
runs again and their chart, drawn from the JSON real (quick) benchmark runs
wrote; without matplotlib, --out is refused naming the extra to install; a file
that is not a benchmark's JSON is refused naming the file. No figure is asserted:
the runs' figures are not a test's business, only that every row is reported."""
from __future__ import annotations

import json
import struct
import subprocess
import sys

import pytest

from sparkjournal.cli.main import main
from sparkjournal.tools.bench.report import BenchResult, print_report, read_report

from conftest import NATIVE_BUILT, NATIVE_MISSING_REASON

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def bench_files(tmp_path_factory):
    """The JSON of a quick journal benchmark (ratio targets, absolute targets,
    reported floors) and of a quick compaction benchmark, each run for real."""
    if not NATIVE_BUILT:
        pytest.skip(NATIVE_MISSING_REASON)
    folder = tmp_path_factory.mktemp("bench-chart")
    journal, maintenance = folder / "journal.json", folder / "maintenance.json"
    assert main(["bench", "journal", "--quick", "--dir", str(folder), "--json", str(journal)]) == 0
    assert main(["bench", "maintenance", "--quick", "--only", "compaction", "--dir", str(folder),
                 "--json", str(maintenance)]) == 0
    return folder, [journal, maintenance]


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (the first, right after the signature)."""
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_bench_report_prints_every_row_again_and_draws_them_into_a_png(bench_files, capsys):
    pytest.importorskip("matplotlib")
    folder, files = bench_files
    chart = folder / "chart.png"
    capsys.readouterr()
    assert main(["bench", "report", *map(str, files), "--out", str(chart)]) == 0
    out = capsys.readouterr().out
    rows = {path: json.loads(path.read_text()) for path in files}
    for path, written in rows.items():
        assert str(path) in out
        for row in written:
            assert any(line.startswith(row["name"]) for line in out.splitlines()), row["name"]
    kinds = {row["target_of"] for written in rows.values() for row in written}
    assert {"ratio", "value", "reported"} <= kinds          # every kind of row was drawn
    assert f"chart of 2 reports written to {chart}" in out
    data = chart.read_bytes()
    width, height = png_size(data)
    assert len(data) > 20_000 and width >= 800 and height >= 600


def test_the_chart_names_each_row_of_each_run_in_its_panel(bench_files, tmp_path):
    pytest.importorskip("matplotlib")
    from sparkjournal.tools.bench.chart import draw_chart
    _folder, files = bench_files
    reports = [(str(path), read_report(str(path))) for path in files]
    figure = draw_chart(reports, str(tmp_path / "chart.svg"))
    panels = [[" ".join(label.get_text().split("\n")) for label in ax.get_yticklabels()]
              for ax in figure.axes]                     # long names are wrapped on the chart
    assert panels == [[r.name for r in results] for _, results in reports]
    assert (tmp_path / "chart.svg").read_text().lstrip().startswith("<?xml")


def test_bench_report_without_matplotlib_names_the_extra_to_install(tmp_path):
    rows = tmp_path / "rows.json"
    print_report([BenchResult("commit", 2.0, "commits/s", 1.0, 1.5, "ratio")], str(rows))
    script = ("import sys\n"
              "sys.modules['matplotlib'] = None   # what an install without the chart extra has\n"
              "from sparkjournal.cli.main import main\n"
              f"sys.exit(main(['bench', 'report', {str(rows)!r}, '--out', "
              f"{str(tmp_path / 'chart.png')!r}]))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 2
    assert 'pip install "sparkjournal[chart]"' in result.stderr and "matplotlib" in result.stderr
    assert result.stdout == "" and not (tmp_path / "chart.png").exists()


@pytest.mark.parametrize("content, message", [
    ("{not json", "is not JSON"),
    ('{"name": "commit"}', "is not a benchmark's results"),
    ('[{"name": "commit", "value": 1.0}]', "row 1 is not a benchmark's row (it lacks unit, "
                                           "baseline, ratio, target, target_of)"),
    ('[{"name": "commit", "value": "fast", "unit": "x", "baseline": 1.0, "ratio": null, '
     '"target": 2, "target_of": "ratio"}]', "row 1 is not a benchmark's row (value not a number)"),
    ('[{"name": "commit", "value": 1.0, "unit": "x", "baseline": 1.0, "ratio": 1.0, '
     '"target": 2, "target_of": "more"}]', "target_of is 'more', not one of ratio, value"),
])
def test_bench_report_refuses_a_file_that_is_no_benchmark_json(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["bench", "report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}" in err and message in err and "Traceback" not in err


def test_bench_report_without_out_prints_the_tables_only(tmp_path, capsys):
    rows = tmp_path / "rows.json"
    print_report([BenchResult("commit", 2.0, "commits/s", 1.0, 1.5, "ratio"),
                  BenchResult("p99", 4.1, "ms", 2.0, 2.0, "max_ratio")], str(rows))
    capsys.readouterr()
    assert main(["bench", "report", str(rows)]) == 0
    out = capsys.readouterr().out
    assert "1 of 2 targets met" in out and "chart" not in out
    assert [p.name for p in tmp_path.iterdir()] == ["rows.json"]


def test_bench_report_refuses_a_chart_name_it_cannot_write(tmp_path, capsys):
    rows = tmp_path / "rows.json"
    print_report([BenchResult("commit", 2.0, "commits/s", 1.0, 1.5, "ratio")], str(rows))
    assert main(["bench", "report", str(rows), "--out", str(tmp_path / "chart.jpg")]) == 2
    assert "give a file name ending in .png or .svg" in capsys.readouterr().err
