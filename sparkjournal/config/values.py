"""The kinds of value an option takes: how a user's text (or a Python value)
becomes the typed value, what a user reads it accepts, and how a value is
written back the way a user writes it (``10m``, ``500us``, ``0750``).

Sizes accept Spark-style strings (``10m``, ``490k``, ``1g``, or bytes); times
accept ``500us``, ``3ms``, ``1s`` (a bare number is nanoseconds, as Artemis's
journal-buffer-timeout). A kind's ``parse`` raises ``Refused`` for a value
outside its bounds; option.py turns that into the ConfigError naming the
option, the value and the option's accepted-values text, so every bound's
message is that one text.
"""
from __future__ import annotations

import dataclasses
import datetime
import os
import re
from typing import Any, Callable

_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
               "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
_TIME_UNITS = {"": 1, "ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_AGE_UNITS = {"s": 1, "sec": 1, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
SIZE_TEXT = "a size such as {example}, 490k, 1g or a number of bytes"


class Refused(ValueError):
    """A value its kind does not accept (option.py names the option)."""


def one_path_segment(text: str) -> bool:
    """Whether ``text`` can name one folder: not empty, no '/', not '.' or '..',
    no NUL (a writer's name in the commit log, events/commit_log.py)."""
    return bool(text) and "/" not in text and text not in (".", "..") and "\x00" not in text


def _show_in_units(value: int, units) -> str:
    for unit, size in units:
        if value > 0 and value % size == 0:
            return f"{value // size}{unit}"
    return str(value)


@dataclasses.dataclass(frozen=True)
class Flag:
    accepts = "true or false"

    def parse(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "1", "on"):
            return True
        if text in ("false", "no", "0", "off"):
            return False
        raise Refused(value)

    def show(self, value: bool) -> str:
        return str(value).lower()


@dataclasses.dataclass(frozen=True)
class Choice:
    """One of ``choices`` ((name, what it means), ...), any case."""
    choices: tuple

    @property
    def accepts(self) -> str:
        texts = [f"{name} ({meaning})" for name, meaning in self.choices]
        return ", ".join(texts[:-1]) + " or " + texts[-1]

    def parse(self, value: Any) -> str:
        text = str(value).strip().upper()
        if text not in [name for name, _meaning in self.choices]:
            raise Refused(value)
        return text

    def show(self, value: str) -> str:
        return value


@dataclasses.dataclass(frozen=True)
class Whole:
    """A whole number from ``minimum`` (to ``maximum``)."""
    minimum: int
    maximum: int | None = None
    note: str = ""

    @property
    def accepts(self) -> str:
        bound = f"from {self.minimum}" + (f" to {self.maximum}" if self.maximum is not None
                                          else " up")
        return f"a whole number {bound}" + (f" ({self.note})" if self.note else "")

    def parse(self, value: Any) -> int:
        try:
            number = int(str(value).strip()) if not isinstance(value, bool) else None
        except ValueError:
            number = None
        if number is None or number < self.minimum or (self.maximum is not None
                                                       and number > self.maximum):
            raise Refused(value)
        return number

    def show(self, value: int) -> str:
        return str(value)


def size_bytes(value: Any) -> int:
    """``10m``, ``490k``, ``1g``, ``4096`` (or an int) as bytes; Refused otherwise."""
    if isinstance(value, bool):
        raise Refused(value)
    if isinstance(value, int):
        return value
    match = _NUMBER.match(str(value))
    if not match or match.group(2).lower() not in _SIZE_UNITS:
        raise Refused(value)
    return int(float(match.group(1)) * _SIZE_UNITS[match.group(2).lower()])


@dataclasses.dataclass(frozen=True)
class Size:
    """A number of bytes, at least ``minimum``, at most ``maximum``, a multiple
    of ``multiple``, one of ``choices`` when given; -1 too (no limit) when
    ``unlimited``."""
    minimum: int = 0
    maximum: int | None = None
    multiple: int = 1
    choices: tuple = ()
    unlimited: bool = False
    example: str = "10m"
    note: str = ""

    @property
    def accepts(self) -> str:
        if self.minimum:
            text = f"a size of at least {self.show(self.minimum)}, such as {self.example}"
        else:
            text = SIZE_TEXT.format(example=self.example)
        return (text + (f" ({self.note})" if self.note else "")
                + (", or -1 for no limit" if self.unlimited else ""))

    def parse(self, value: Any) -> int:
        if self.unlimited and str(value).strip() == "-1":
            return -1
        size = size_bytes(value)
        if (size < self.minimum or (self.maximum is not None and size > self.maximum)
                or size % self.multiple or (self.choices and size not in self.choices)):
            raise Refused(value)
        return size

    def show(self, value: int) -> str:
        return _show_in_units(value, (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10)))


@dataclasses.dataclass(frozen=True)
class Time:
    """A duration in nanoseconds."""
    accepts = "a time such as 500us, 3ms, 1s, or nanoseconds"

    def parse(self, value: Any) -> int:
        match = _NUMBER.match(str(value))
        if isinstance(value, bool) or not match or match.group(2).lower() not in _TIME_UNITS:
            raise Refused(value)
        return int(float(match.group(1)) * _TIME_UNITS[match.group(2).lower()])

    def show(self, value: int) -> str:
        return _show_in_units(value, (("s", 10 ** 9), ("ms", 10 ** 6), ("us", 10 ** 3)))


@dataclasses.dataclass(frozen=True)
class Retention:
    """() for none; ("age", seconds) for 7d, 12h, 90min, 30s; ("size", bytes)
    for 500g, 10m, 1t (a bare m is mebibytes, as every size here: minutes are
    min). A tuple is taken as already parsed."""
    accepts = "none, an age (7d, 12h, 90min, 30s, 2w) or a size per lane (500g, 10m, 1t)"

    def parse(self, value: Any) -> tuple:
        if isinstance(value, tuple):
            return value
        text = str(value).strip().lower()
        if text in ("", "none", "0"):
            return ()
        match = _NUMBER.match(text)
        if match and match.group(2) in _AGE_UNITS:
            return ("age", float(match.group(1)) * _AGE_UNITS[match.group(2)])
        if match and match.group(2) in _SIZE_UNITS and match.group(2):
            return ("size", int(float(match.group(1)) * _SIZE_UNITS[match.group(2)]))
        raise Refused(value)

    def show(self, value: tuple) -> str:
        if not value:
            return "none"
        kind, amount = value
        return Size().show(amount) if kind == "size" else f"{amount:g}s"


@dataclasses.dataclass(frozen=True)
class Mode:
    """Octal permission bits (``0750``, ``750``, ``0o750``; a Python int is
    taken as the bits themselves). The owner needs ``owner`` (rwx for folders,
    rw for files) or the journal could not work; world write is refused."""
    owner: int
    example: str

    @property
    def accepts(self) -> str:
        return (f"octal permission bits such as {self.example}, with at least "
                f"{self.owner:o} for the owner and no write for others (o-w)")

    def parse(self, value: Any) -> int:
        if isinstance(value, bool):
            raise Refused(value)
        if isinstance(value, int):
            bits = value
        else:
            text = str(value).strip().lower().removeprefix("0o")
            if not text or any(c not in "01234567" for c in text):
                raise Refused(value)
            bits = int(text, 8)
        if bits < 0 or bits > 0o777 or bits & self.owner != self.owner or bits & 0o002:
            raise Refused(value)
        return bits

    def show(self, value: int) -> str:
        return f"0{value:o}"


def inside_folder(text: str) -> bool:
    """Whether ``text`` is a relative folder path that stays inside the folder
    it is relative to."""
    return bool(text) and not os.path.isabs(text) and ".." not in text.replace("\\", "/").split("/")


def not_blank(text: str) -> bool:
    return bool(text.strip())


@dataclasses.dataclass(frozen=True)
class Text:
    """A string that ``valid`` accepts (None is the empty string)."""
    accepts: str
    valid: Callable[[str], bool]

    def parse(self, value: Any) -> str:
        text = "" if value is None else str(value)
        if not self.valid(text):
            raise Refused(value)
        return text

    def show(self, value: str) -> str:
        return value


@dataclasses.dataclass(frozen=True)
class Instant:
    """ISO 8601 (naive means UTC) or milliseconds since the epoch, as an aware
    datetime."""
    accepts = "ISO 8601 (2026-11-21T08:00:00Z) or milliseconds since the epoch"

    def parse(self, value: Any) -> datetime.datetime:
        text = str(value).strip()
        try:
            if text.isdigit():
                return datetime.datetime.fromtimestamp(int(text) / 1e3, datetime.timezone.utc)
            parsed = datetime.datetime.fromisoformat(text)
        except (ValueError, OverflowError):
            raise Refused(value) from None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.timezone.utc)

    def show(self, value: datetime.datetime) -> str:
        return value.isoformat()
