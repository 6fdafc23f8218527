"""How the benchmarks measure and report.

* ``Rounds``: contenders measured in interleaved rounds (each round runs every
  contender once, back to back), their medians and their paired ratios.
* ``BenchResult`` and ``render_table``: one row per measurement, the target
  either a ratio to the baseline or an absolute value; a row that could not be
  measured here (``skipped``: no JVM reader, a reader that refuses the data)
  keeps its name and target and says why, so tables and JSON have the same
  rows in every run.
* ``print_report`` writes a run's rows as a JSON list, ``read_report`` reads
  one back (``sparkjournal bench report``, report_command.py, prints the
  tables of earlier runs again and draws their chart, chart.py).
"""
from __future__ import annotations

import dataclasses
import json
import os
import statistics

from ...errors import UsageError


class Rounds:
    """The values of contenders measured in interleaved rounds.

    The machine is shared: a slow spell slows every contender of the round it
    falls in, so a ratio is taken within each round and the median of those is
    reported (``paired``); the median of each contender's own values
    (``median``) is what the table shows as value and baseline."""

    def __init__(self, values: dict[str, list[float]]):
        self.values = values

    @classmethod
    def run(cls, measures: dict, repeats: int, log=None, label: str = "") -> "Rounds":
        """Runs every {name: measure} (a function returning the measured value)
        ``repeats`` times, interleaved; logs each round when ``log`` is given.
        Each round starts one contender further on (A B C, B C A, C A B, ...), so
        none always runs right after the same other one and pays for what it
        left behind (a JVM's garbage, a disk's writeback)."""
        values = {name: [] for name in measures}
        names = list(measures)
        for round_ in range(repeats):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                values[name].append(measures[name]())
            if log:
                log(f"{label} run {round_ + 1}/{repeats}: " +
                    ", ".join(f"{name} {v[-1]:,.1f}" for name, v in values.items()))
        return cls(values)

    def median(self, name: str) -> float:
        return statistics.median(self.values[name])

    def medians(self) -> dict[str, float]:
        return {name: self.median(name) for name in self.values}

    def paired(self, name: str, baseline: str) -> float:
        """The median over the rounds of name's value / baseline's value."""
        return statistics.median(v / b for v, b in zip(self.values[name], self.values[baseline]))

    def result(self, title: str, name: str, baseline: str, unit: str, target: float,
               target_of: str = "ratio", detail: str = "") -> "BenchResult":
        """The row of ``name`` against ``baseline``: their medians and the paired ratio."""
        return BenchResult(title, self.median(name), unit, self.median(baseline), target, target_of,
                           detail, self.paired(name, baseline))


REPORTED = "reported"        # BenchResult.target_of of a figure with no target
PAIRED = "median of per-round ratios"   # the JSON's ratio_of where rounds paired the two
JSON_KEYS = ("name", "value", "unit", "baseline", "ratio", "target", "target_of")
TARGET_KINDS = ("ratio", "value", "max_ratio", "max_value", REPORTED)


def skipped(name: str, unit: str, target: float, reason: str,
            target_of: str = "ratio") -> "BenchResult":
    """The row ``name`` not measured in this run, ``reason`` saying why."""
    return BenchResult(name, None, unit, None, target, target_of, reason, skipped=reason)


@dataclasses.dataclass
class BenchResult:
    name: str
    value: float | None          # None: skipped
    unit: str
    baseline: float | None       # measured in the same run; None for absolute targets
    target: float
    target_of: str               # "ratio": ratio >= target; "value": value >= target;
    #                              "max_ratio" / "max_value": at most the target (latencies);
    #                              "reported": a figure shown beside the targets, none itself
    detail: str = ""
    paired: float | None = None  # the median of per-round ratios, where rounds pair the two
    skipped: str = ""            # why the row was not measured in this run ("": it was)

    RATIO_DIGITS, VALUE_DIGITS = 4, 3     # the JSON's (and the verdict's) rounding

    @property
    def ratio(self) -> float | None:
        """The paired ratio where the case measured one (each round ran the
        baseline and the contender back to back, so slow and fast spells of a
        shared machine cancel out), else value / baseline."""
        if self.paired is not None:
            return self.paired
        return self.value / self.baseline if self.baseline and self.value is not None else None

    @property
    def reported(self) -> bool:
        return self.target_of == REPORTED

    @property
    def passed(self) -> bool | None:
        """Whether the target is met by the figure as the JSON and the table
        show it (rounded: a ratio shown as 0.5 meets a 0.5 target); None for a
        reported figure (no target) and for a skipped row."""
        if self.reported or self.skipped:
            return None
        if self.target_of in ("ratio", "max_ratio"):
            measured = None if self.ratio is None else round(self.ratio, self.RATIO_DIGITS)
        else:
            measured = None if self.value is None else round(self.value, self.VALUE_DIGITS)
        if measured is None:
            return False
        return measured <= self.target if self.target_of.startswith("max_") else measured >= self.target

    @classmethod
    def from_json(cls, row: dict) -> "BenchResult":
        """The row ``as_json`` wrote, its figures as rounded there."""
        return cls(row["name"], row["value"], row["unit"], row["baseline"],
                   0.0 if row["target_of"] == REPORTED else row["target"], row["target_of"],
                   row.get("detail") or "",
                   row["ratio"] if row.get("ratio_of") == PAIRED else None,
                   row.get("skipped") or "")

    def as_json(self) -> dict:
        return {"name": self.name,
                "value": None if self.value is None else round(self.value, self.VALUE_DIGITS),
                "unit": self.unit,
                "baseline": None if self.baseline is None else round(self.baseline, self.VALUE_DIGITS),
                "ratio": None if self.ratio is None else round(self.ratio, self.RATIO_DIGITS),
                "ratio_of": PAIRED if self.paired is not None else "value / baseline",
                "target": None if self.reported else self.target, "target_of": self.target_of,
                "pass": self.passed, "detail": self.detail, "skipped": self.skipped or None}


def figure_text(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}"


def render_table(results: list) -> str:
    rows = [("name", "value", "unit", "baseline", "ratio", "target", "")]
    for r in results:
        bound = "<=" if r.target_of.startswith("max_") else ">="
        target = ("-" if r.reported else f"{bound} {r.target:g}x" if r.target_of.endswith("ratio")
                  else f"{bound} {figure_text(r.target)}")
        rows.append((r.name, figure_text(r.value), r.unit, figure_text(r.baseline),
                     "-" if r.ratio is None else f"{r.ratio:.2f}", target,
                     "SKIP" if r.skipped else "" if r.reported else "PASS" if r.passed else "MISS"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [cell.rjust(width) if i < 5 else cell.ljust(width)
                                             for i, (cell, width) in enumerate(zip(row[1:], widths[1:]), 1)]
        lines.append("  ".join(cells).rstrip())
        if index == 0:
            lines.append("-" * len(lines[0]))
    return "\n".join(lines)


def markdown_table(results: list) -> str:
    """The rows as a markdown table (docs/performance.md is made of these):
    each figure, its same-run baseline, the ratio, the target and whether it
    is met; details follow the table as a list."""
    lines = ["| measure | value | baseline (same run) | ratio | target | |", "|---|---|---|---|---|---|"]
    for r in results:
        bound = "≤" if r.target_of.startswith("max_") else "≥"
        target = ("–" if r.reported else f"{bound} {r.target:g}×" if r.target_of.endswith("ratio")
                  else f"{bound} {figure_text(r.target)} {r.unit}")
        state = (f"skipped: {r.skipped}" if r.skipped else "reported" if r.reported
                 else "met" if r.passed else "missed")
        value = "–" if r.value is None else f"{figure_text(r.value)} {r.unit}"
        baseline = "–" if r.baseline is None else f"{figure_text(r.baseline)} {r.unit}"
        ratio = "–" if r.ratio is None else f"{r.ratio:.2f}"
        lines.append(f"| {r.name} | {value} | {baseline} | {ratio} | {target} | {state} |")
    details = [f"- {r.name}: {r.detail}" for r in results if r.detail]
    return "\n".join(lines + ([""] + details if details else []))


def print_report(results: list, json_path: str | None, footer: str = "") -> None:
    """The table, each result's detail, the count of targets met; and the JSON
    list (name, value, unit, baseline, ratio, target) to ``json_path`` if given."""
    print(render_table(results))
    for result in results:
        if result.detail:
            print(f"  {result.name}: {result.detail}")
    targets = [r for r in results if not r.reported and not r.skipped]
    left = sum(1 for r in results if r.skipped)
    print(f"\n{sum(r.passed for r in targets)} of {len(targets)} targets met"
          f"{f'; {left} rows skipped' if left else ''}{footer}")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as handle:
            json.dump([r.as_json() for r in results], handle, indent=2)
            handle.write("\n")


def read_report(path: str) -> list:
    """The rows a benchmark's ``--json FILE`` holds; UsageError naming the file
    and what is wrong when it is missing or not such a list."""
    if not os.path.isfile(path):
        raise UsageError(f"{path} does not exist or is not a file: give the FILE a benchmark "
                         f"wrote with --json FILE")
    with open(path, encoding="utf-8") as handle:
        try:
            rows = json.load(handle)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise UsageError(f"{path} is not JSON ({error}): give the FILE a benchmark wrote "
                             f"with --json FILE") from None
    if not isinstance(rows, list) or not rows:
        raise UsageError(f"{path} is not a benchmark's results: a benchmark's --json FILE "
                         f"holds a non-empty list of rows")
    for index, row in enumerate(rows):
        wrong = row_errors(row)
        if wrong:
            raise UsageError(f"{path}: row {index + 1} is not a benchmark's row ({wrong}): give "
                             f"the FILE a benchmark wrote with --json FILE")
    return [BenchResult.from_json(row) for row in rows]


def row_errors(row) -> str:
    """What keeps ``row`` from being a row ``as_json`` wrote ("" when nothing)."""
    missing = [key for key in JSON_KEYS if not isinstance(row, dict) or key not in row]
    if missing:
        return f"it lacks {', '.join(missing)}"
    if row["target_of"] not in TARGET_KINDS:
        return f"target_of is {row['target_of']!r}, not one of {', '.join(TARGET_KINDS)}"
    numbers = ("value", "baseline", "ratio") + (() if row["target_of"] == REPORTED else ("target",))
    bad = [key for key in numbers if row[key] is not None and
           (isinstance(row[key], bool) or not isinstance(row[key], (int, float)))]
    if row["target_of"] != REPORTED and row["target"] is None:
        bad.append("target")
    return f"{', '.join(bad)} not a number" if bad else ""
