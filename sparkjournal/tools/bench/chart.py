"""The chart of benchmark results: ``sparkjournal bench report JSON... --out FILE``.

One panel per JSON file (one benchmark run), one line per row, in the table's
order and by the table's names. A row with a ratio is a bar from the baseline
(1x, the dashed line) to its ratio, the figure its benchmark prints, on a
logarithmic axis so that twice as fast and twice as slow are bars of one
length; a ratio target is a black line across the row at the target, and the
bar is green where the target is met, red where it is missed, grey for a figure
reported beside the targets. A row with no ratio (an absolute target, a row
skipped in that run) has its value and target, or why it was skipped, written in
its place. The figures are only the ones in the files: nothing is re-measured.

matplotlib is an optional extra (``pip install "sparkjournal[chart]"``); without
it --out is refused before anything is read or printed.
"""
from __future__ import annotations

import math
import textwrap
import os

from ...errors import UsageError
from .report import BenchResult, figure_text

FORMATS = (".png", ".svg")
INSTALL = 'pip install "sparkjournal[chart]"'
COLOURS = {True: "#2e8b57", False: "#c0392b", None: "#8c8c8c"}   # met, missed, reported
ROW_INCHES, PANEL_INCHES, WIDTH_INCHES = 0.42, 1.1, 14.0
LABEL_CHARS = 60                 # a row's name is wrapped at this width


def check_chart_path(path: str) -> None:
    """UsageError unless ``path`` can be drawn here: a .png or .svg name in an
    existing folder, and matplotlib installed."""
    if os.path.splitext(path)[1].lower() not in FORMATS:
        raise UsageError(f"--out {path}: the chart is written as PNG or SVG; give a file name "
                         f"ending in {' or '.join(FORMATS)}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise UsageError(f"--out {path}: the folder {folder} does not exist")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError(f"--out needs matplotlib, which is not installed: {INSTALL}") from None


def draw_chart(reports: list, path: str):
    """Draws [(name, [BenchResult])] into ``path`` (PNG or SVG by its name) and
    returns the matplotlib Figure."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    heights = [PANEL_INCHES + ROW_INCHES * len(results) for _, results in reports]
    figure = Figure(figsize=(WIDTH_INCHES, sum(heights)), layout="constrained")
    axes = figure.subplots(len(reports), 1, squeeze=False, height_ratios=heights)[:, 0]
    low, high = ratio_span([r for _, results in reports for r in results])
    ticks = [2.0 ** k for k in range(math.floor(math.log2(low)), math.ceil(math.log2(high)) + 1)]
    for ax, (name, results) in zip(axes, reports):
        ax.set_xscale("log")
        ax.set_xlim(low, high)
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}x"))
        ax.axvline(1.0, color="#444444", linestyle="--", linewidth=1)
        for y, result in enumerate(results):
            draw_row(ax, y, result, low)
        ax.set_yticks(range(len(results)), ["\n".join(textwrap.wrap(r.name, LABEL_CHARS))
                                            for r in results], fontsize=8)
        ax.set_ylim(len(results) - 0.5, -0.5)
        ax.set_title(os.path.basename(name), loc="left", fontsize=10)
        ax.set_xlabel("ratio to the baseline measured in the same run (1x, dashed); "
                      "black line: the target", fontsize=8)
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(axis="x", color="#dddddd", linewidth=0.6)
        ax.set_axisbelow(True)
    axes[0].legend(handles=[Patch(color=COLOURS[state], label=label) for state, label in
                            ((True, "target met"), (False, "target missed"),
                             (None, "reported, no target"))],
                   loc="lower right", fontsize=7, framealpha=0.9)
    figure.savefig(path, dpi=110)
    return figure


def draw_row(ax, y: int, result: BenchResult, low: float) -> None:
    ratio = result.ratio
    if result.skipped or ratio is None:
        ax.text(low * 1.05, y, note(result), va="center", fontsize=7, color="#555555")
        return
    ax.barh(y, abs(ratio - 1.0) or 0.01, left=min(ratio, 1.0), height=0.6,
            color=COLOURS[result.passed])
    bound = "<=" if result.target_of.startswith("max_") else ">="
    label = f"{ratio:.2f}x"
    if result.target_of.endswith("ratio"):
        ax.vlines(result.target, y - 0.4, y + 0.4, color="black", linewidth=2)
    elif not result.reported:                  # an absolute target beside the ratio
        label += (f"; {figure_text(result.value)} {result.unit}, "
                  f"target {bound} {figure_text(result.target)} {result.unit}")
    ax.text(ratio * 1.04 if ratio >= 1.0 else 1.04, y, label, va="center", fontsize=7)


def note(result: BenchResult) -> str:
    """What stands in a row that has no ratio to draw."""
    if result.skipped:
        return f"skipped: {result.skipped}"
    bound = "<=" if result.target_of.startswith("max_") else ">="
    target = ("" if result.reported
              else f", target {bound} {figure_text(result.target)} {result.unit}")
    state = {True: " (met)", False: " (missed)", None: ""}[result.passed]
    return f"{figure_text(result.value)} {result.unit}{target}{state}"


def ratio_span(results: list) -> tuple[float, float]:
    """The x range holding every ratio, every ratio target and 1x, with room for labels."""
    values = [1.0] + [r.ratio for r in results if r.ratio and not r.skipped]
    values += [r.target for r in results if r.target_of.endswith("ratio") and r.target > 0]
    return min(values) / 1.6, max(values) * 2.0
