"""Journal configuration: the defaults of journal_options.JOURNAL, then a conf
file (SPARKJOURNAL_CONF), then options given per journal.

A bad value raises ConfigError naming the key, the value and what it accepts;
an unknown key is an error too, so a typo never silently falls back to a
default.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Mapping

from ..errors import ConfigError
from ..format.layout import FILE_HEADER_SIZE
from .journal_options import JOURNAL

# conf/sparkjournal.conf in the source tree is conf_file.conf_text(): the
# defaults for users to copy (tests/test_options.py keeps the two equal);
# SPARKJOURNAL_CONF names a copy to read.
CONF_ENV = "SPARKJOURNAL_CONF"


def _sync_window(self) -> int:
    """Most bytes the writer may have written past its last completed sync."""
    return self.maxIO * self.bufferSize


def _with_options(self, options: Mapping[str, Any]) -> "JournalConfig":
    """This configuration with ``options`` (raw or typed values) applied."""
    return dataclasses.replace(self, **_validate(options, self))


# Every knob of one journal: a frozen dataclass whose fields are JOURNAL's
# options in order, named as the option keys, defaulting to their defaults.
JournalConfig = dataclasses.make_dataclass(
    "JournalConfig",
    [(option.name, type(option.default), dataclasses.field(default=option.default))
     for option in JOURNAL],
    frozen=True,
    namespace={"__module__": __name__, "__doc__": "Every knob of one journal (JOURNAL).",
               "sync_window": property(_sync_window), "with_options": _with_options})


def _validate(options: Mapping[str, Any], base) -> dict[str, Any]:
    """Turns raw option strings into typed values, rejecting anything unknown
    and any combination the journal cannot work with."""
    values: dict[str, Any] = {}
    for raw_key, value in options.items():
        option = JOURNAL.find(raw_key)
        if option is None:
            raise ConfigError(str(raw_key), value,
                              "nothing: it is not a sparkjournal option (known options: "
                              + ", ".join(sorted(JOURNAL.names)) + ")")
        values[option.name] = option.parse(value)
    checked = {**dataclasses.asdict(base), **values}
    if checked["bufferSize"] > checked["fileSize"] - FILE_HEADER_SIZE:
        raise ConfigError("bufferSize", checked["bufferSize"],
                          f"a size below fileSize - {FILE_HEADER_SIZE} bytes "
                          f"(fileSize is {checked['fileSize']})")
    if checked["bufferSize"] % checked["deviceBlockSize"]:
        raise ConfigError("bufferSize", checked["bufferSize"],
                          f"a multiple of deviceBlockSize ({checked['deviceBlockSize']})")
    return values


def read_conf_file(path: str) -> dict[str, str]:
    """Reads ``key value`` or ``key=value`` lines; ``#`` starts a comment."""
    options: dict[str, str] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = re.split(r"\s*=\s*|\s+", line, maxsplit=1)
            if len(parts) != 2 or not parts[1]:
                raise ConfigError(f"{path}:{number}", line, "lines of the form `key value` or `key=value`")
            options[parts[0]] = parts[1]
    return options


def load_config(options: Mapping[str, Any] | None = None, conf_file: str | None = None) -> JournalConfig:
    """Defaults, then the conf file (``conf_file`` or $SPARKJOURNAL_CONF), then
    ``options``; later ones win. A named conf file that is missing is an error."""
    path = conf_file or os.environ.get(CONF_ENV)
    merged: dict[str, Any] = dict(read_conf_file(path)) if path else {}
    merged.update(options or {})
    return JournalConfig().with_options(merged)
