"""An option, defined once: its name, the kind of value it takes (with its
bounds), its default, what it accepts and what it means. config.py's tables
of journal, write and read options are made of these, and everything about an
option comes from its one definition: JournalConfig's defaults, parsing and its
errors, ``sparkjournal options [--markdown | --conf]``, conf/sparkjournal.conf
and the option names the JVM connector reads (spark/jvm_build.py).

A kind of value says how a user's text (or a Python value) becomes the typed
value, what a user reads it accepts, and how a value is written back the way a
user writes it (``10m``, ``500us``, ``0750``; units.py). Its ``parse`` raises
``Refused`` for a value outside its bounds; ``Option.parse`` turns that into
the ConfigError naming the option, the value and the option's accepted-values
text, so every bound's message is that one text.
"""
from __future__ import annotations

import dataclasses
import datetime
import os
from typing import Any, Callable, Iterator

from .errors import ConfigError
from .units import AGE_UNITS, SIZE_UNITS, TIME_UNITS, quantity, size_text, time_text

SIZE_TEXT = "a size such as {example}, 490k, 1g or a number of bytes"


class Refused(ValueError):
    """A value its kind does not accept (Option.parse names the option)."""


def one_path_segment(text: str) -> bool:
    """Whether ``text`` can name one folder: not empty, no '/', not '.' or '..',
    no NUL (a writer's name in the commit log, events/commit_log.py)."""
    return bool(text) and "/" not in text and text not in (".", "..") and "\x00" not in text


def writer_name(text: str) -> bool:
    """Whether ``text`` can name a writer of its own in the commit log: one
    path segment not starting with '_' or 'batch-write-', the names of the
    log's own folders and of DataSource batch writes (format/COMMIT_LOG.md)."""
    return one_path_segment(text) and not text.startswith(("_", "batch-write-"))


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
    size = quantity(str(value), SIZE_UNITS)
    if size is None:
        raise Refused(value)
    return int(size)


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
        return size_text(value)


@dataclasses.dataclass(frozen=True)
class Time:
    """A duration in nanoseconds."""
    accepts = "a time such as 500us, 3ms, 1s, or nanoseconds"

    def parse(self, value: Any) -> int:
        nanoseconds = None if isinstance(value, bool) else quantity(str(value), TIME_UNITS)
        if nanoseconds is None:
            raise Refused(value)
        return int(nanoseconds)

    def show(self, value: int) -> str:
        return time_text(value)


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
        age = quantity(text, AGE_UNITS)
        if age is not None:
            return ("age", age)
        size = quantity(text, SIZE_UNITS)
        if size is not None and text[-1].isalpha():       # a bare number is neither
            return ("size", int(size))
        raise Refused(value)

    def show(self, value: tuple) -> str:
        if not value:
            return "none"
        kind, amount = value
        return size_text(amount) if kind == "size" else f"{amount:g}s"


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


# --- options ---------------------------------------------------------------------------

UNSET = "–"       # the default shown for an option that is simply not applied when not given


@dataclasses.dataclass(frozen=True)
class Option:
    name: str
    kind: Any                 # a kind of value above: parse, show, accepts
    default: Any              # the typed default; None: not set unless given
    meaning: str
    accepted: str = ""        # what it accepts, when the kind's own text does not say it all
    shown_default: str = ""   # the default as a user reads it, when it is no value of the kind
    longer: str = ""          # the meaning at length, for conf/sparkjournal.conf's comment

    @property
    def explained(self) -> str:
        return self.longer or self.meaning

    @property
    def accepts(self) -> str:
        return self.accepted or self.kind.accepts

    @property
    def default_text(self) -> str:
        """The default as a user writes it (``10m``, ``500us``, ``0750``, ``none``)."""
        if self.shown_default:
            return self.shown_default
        return UNSET if self.default is None else self.kind.show(self.default)

    def parse(self, value: Any) -> Any:
        """``value`` as this option's typed value; ConfigError naming the option,
        the value and what it accepts when it is not one."""
        try:
            return self.kind.parse(value)
        except Refused:
            raise ConfigError(self.name, value, self.accepts) from None


class OptionTable:
    """The options of one kind (journal, sink, read), in the order users read
    them; names are looked up ignoring case, as Spark passes them lower-cased."""

    def __init__(self, *options: Option):
        self.options = options
        self._by_lower = {option.name.lower(): option for option in options}
        if len(self._by_lower) != len(options):
            raise ValueError("two options of one table share a name")

    def __iter__(self) -> Iterator[Option]:
        return iter(self.options)

    def __len__(self) -> int:
        return len(self.options)

    def __getitem__(self, name: str) -> Option:
        return self._by_lower[name.lower()]

    def find(self, key: str) -> Option | None:
        """The option named ``key`` in any case, or None."""
        return self._by_lower.get(str(key).lower())

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(option.name for option in self.options)
