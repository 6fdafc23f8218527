"""``sparkjournal bench report JSON... [--markdown] [--out FILE]``: the tables
of earlier benchmark runs again (report.py), and their chart (chart.py)."""
from __future__ import annotations

from .chart import check_chart_path, draw_chart
from .report import markdown_table, print_report, read_report


def run(args) -> int:
    """``sparkjournal bench report JSON... [--markdown] [--out FILE]``: each
    file's table as its benchmark printed it (or as markdown), and with --out
    their chart. A missing chart
    library or a bad file is reported before anything is printed."""
    if args.out:
        check_chart_path(args.out)
    reports = [(path, read_report(path)) for path in args.json_files]
    for index, (path, results) in enumerate(reports):
        if index:
            print()
        print(path)
        if getattr(args, "markdown", False):
            print()
            print(markdown_table(results))
        else:
            print_report(results, None)
    if args.out:
        draw_chart(reports, args.out)
        print(f"\nchart of {len(reports)} report{'s' if len(reports) > 1 else ''} "
              f"written to {args.out}")
    return 0
