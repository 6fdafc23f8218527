"""Quantities as sparkjournal reads and writes them: sizes and times as options
spell them (``10m``, ``490k``, ``1g``, bytes; ``500us``, ``3ms``, ``1s``,
nanoseconds), and how the tools print binary sizes, rates and times in the
form the configuration accepts (``83us``)."""
from __future__ import annotations

import re

SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
              "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
TIME_UNITS = {"": 1, "ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
AGE_UNITS = {"s": 1, "sec": 1, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}   # seconds
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def quantity(text: str, units: dict) -> float | None:
    """``text`` (a number and one of ``units``, any case: ``10m``, ``1.5g``) in
    the units' base (bytes, nanoseconds, seconds); None when it is not one."""
    match = _NUMBER.match(text)
    if not match or match.group(2).lower() not in units:
        return None
    return float(match.group(1)) * units[match.group(2).lower()]


def _in_units(value: int, units) -> str:
    for unit, size in units:
        if value > 0 and value % size == 0:
            return f"{value // size}{unit}"
    return str(value)


def size_text(count: int) -> str:
    """Bytes as an option writes them, in the largest whole unit: ``10m``, ``490k``, ``512``."""
    return _in_units(count, (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)))


def time_text(nanoseconds: int) -> str:
    """Nanoseconds as an option writes them, in the largest whole unit: ``60s``, ``500us``."""
    return _in_units(nanoseconds, (("s", 10 ** 9), ("ms", 10 ** 6), ("us", 10 ** 3)))


def human_bytes(count: float) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def config_time(nanoseconds: float) -> str:
    """A time as sparkjournal.conf writes it: whole microseconds (``83us``), or
    nanoseconds below one microsecond. Never 0: the journal needs a timeout."""
    if nanoseconds >= 1000:
        return f"{max(1, round(nanoseconds / 1000))}us"
    return f"{max(1, round(nanoseconds))}ns"


def percent(part: float, whole: float) -> str:
    return f"{100.0 * part / whole:.1f} %" if whole else "-"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
