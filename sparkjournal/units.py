"""How the tools print quantities: binary sizes, rates, and times in the form
the configuration accepts (``83us``)."""
from __future__ import annotations


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
