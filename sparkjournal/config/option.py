"""One option, defined once: its name, the kind of value it takes (with its
bounds, values.py), its default, what it accepts and what it means. Every
table of options (journal_options.py, spark_options.py) is made of these, and
everything about an option comes from its one definition: JournalConfig's
defaults, parsing and its errors, ``sparkjournal options [--markdown]``,
conf/sparkjournal.conf and the option names the JVM connector reads.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterator

from ..errors import ConfigError
from .values import Refused

UNSET = "–"       # the default shown for an option that is simply not applied when not given


@dataclasses.dataclass(frozen=True)
class Option:
    name: str
    kind: Any                 # a kind of values.py: parse, show, accepts
    default: Any              # the typed default; None: not set unless given
    meaning: str
    accepted: str = ""        # what it accepts, when the kind's own text does not say it all
    shown_default: str = ""   # the default as a user reads it, when it is no value of the kind

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
