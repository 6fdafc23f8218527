"""Journal configuration: defaults from conf/sparkjournal.conf, overridable per
journal, under camelCase names as Spark options are spelled.

Sizes accept Spark-style strings (``10m``, ``490k``, ``1g``, or bytes); times
accept ``500us``, ``3ms``, ``1s`` (a bare number is nanoseconds, as Artemis's
journal-buffer-timeout). A bad value raises ConfigError naming the key and what
it accepts; an unknown key is an error too, so a typo never silently falls back
to a default.
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Mapping

from .config_keys import accepts
from .errors import ConfigError
from .format.layout import FILE_HEADER_SIZE, FILE_SIZE_MULTIPLE

# conf/sparkjournal.conf in the source tree states these same defaults for users
# to copy (tests/test_options.py keeps the two equal); SPARKJOURNAL_CONF names a
# copy to read.
CONF_ENV = "SPARKJOURNAL_CONF"

_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
               "g": 1 << 30, "gb": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
_TIME_UNITS = {"": 1, "ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_NUMBER = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
JOURNAL_TYPES = ("AUTO", "ASYNCIO", "NIO")
ADDRESS_FULL_POLICIES = ("PAGE", "BLOCK", "DROP", "FAIL")
_AGE_UNITS = {"s": 1, "sec": 1, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(key: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ConfigError(key, value, "a size such as 10m, 490k, 1g or a number of bytes")
    if isinstance(value, int):
        number, unit = value, ""
    else:
        match = _NUMBER.match(str(value))
        if not match or match.group(2).lower() not in _SIZE_UNITS:
            raise ConfigError(key, value, "a size such as 10m, 490k, 1g or a number of bytes")
        number, unit = float(match.group(1)), match.group(2).lower()
    return int(number * _SIZE_UNITS[unit])


def parse_time_ns(key: str, value: Any) -> int:
    match = _NUMBER.match(str(value))
    if isinstance(value, bool) or not match or match.group(2).lower() not in _TIME_UNITS:
        raise ConfigError(key, value, "a time such as 500us, 3ms, 1s, or nanoseconds")
    return int(float(match.group(1)) * _TIME_UNITS[match.group(2).lower()])


def parse_retention(key: str, value: Any) -> tuple:
    """() for none; ("age", seconds) for 7d, 12h, 90min, 30s; ("size", bytes) for
    500g, 10m, 1t (a bare m is mebibytes, as every size here: minutes are min)."""
    text = str(value).strip().lower()
    if text in ("", "none", "0"):
        return ()
    match = _NUMBER.match(text)
    if match and match.group(2) in _AGE_UNITS:
        return ("age", float(match.group(1)) * _AGE_UNITS[match.group(2)])
    if match and match.group(2) in _SIZE_UNITS and match.group(2):
        return ("size", int(float(match.group(1)) * _SIZE_UNITS[match.group(2)]))
    raise ConfigError(key, value, "none, an age (7d, 12h, 90min, 30s, 2w) or a size per lane "
                      "(500g, 10m, 1t)")


def parse_bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off"):
        return False
    raise ConfigError(key, value, "true or false")


def parse_mode(key: str, value: Any, owner: int) -> int:
    """Octal permission bits (``0750``, ``750``, ``0o750``; a Python int is taken
    as the bits themselves). The owner needs ``owner`` (rwx for folders, rw for
    files) or the journal could not work; world write is refused."""
    accepted = (f"octal permission bits such as {oct(owner | 0o50)[2:].rjust(4, '0')}, with at "
                f"least {oct(owner)[2:]} for the owner and no write for others (o-w)")
    if isinstance(value, bool):
        raise ConfigError(key, value, accepted)
    if isinstance(value, int):
        bits = value
    else:
        text = str(value).strip().lower().removeprefix("0o")
        if not text or any(c not in "01234567" for c in text):
            raise ConfigError(key, value, accepted)
        bits = int(text, 8)
    if bits < 0 or bits > 0o777 or bits & owner != owner or bits & 0o002:
        raise ConfigError(key, value, accepted)
    return bits


def parse_int(key: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    try:
        number = int(str(value).strip()) if not isinstance(value, bool) else None
    except ValueError:
        number = None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        bound = f"from {minimum}" + (f" to {maximum}" if maximum is not None else " up")
        raise ConfigError(key, value, f"a whole number {bound}")
    return number


@dataclasses.dataclass(frozen=True)
class JournalConfig:
    """Every knob of one journal. Field names are the option keys."""

    createDirs: bool = True
    journalType: str = "AUTO"
    syncTransactional: bool = True
    syncNonTransactional: bool = True
    datasync: bool = True
    fileSize: int = 10 << 20
    minFiles: int = 2
    poolFiles: int = -1
    maxIO: int = 4
    bufferTimeout: int = 500_000          # ns
    bufferSize: int = 490 << 10
    deviceBlockSize: int = 512
    compactMinFiles: int = 10
    compactPercentage: int = 30
    checksum: bool = True
    checkForCorruptFiles: bool = True
    archive: bool = False
    archiveDirectory: str = "archive"
    largeRecordSize: int = 0              # 0: bodies whose record does not fit a data file are large
    userVersion: int = 0
    lockWait: bool = False
    recover: bool = False
    # Maintenance (maintenance/): what stays, and what happens when a lane is full.
    retention: tuple = ()                 # (): keep all; ("age", s) or ("size", bytes per lane)
    maxSizeBytes: int = -1                # a lane's data files; -1: no limit
    maxRootSizeBytes: int = -1            # all lanes of a node root together; -1: no limit
    addressFullPolicy: str = "PAGE"       # over a limit: PAGE, BLOCK, DROP or FAIL
    pageSizeBytes: int = 10 << 20         # about this much per page file
    laneIdleTimeout: int = 60_000_000_000  # ns a Spark worker keeps an unused lane writer open
    # Who may touch the data (io/modes.py): bits of every folder / file created.
    dirMode: int = 0o750
    fileMode: int = 0o640

    @property
    def sync_window(self) -> int:
        """Most bytes the writer may have written past its last completed sync."""
        return self.maxIO * self.bufferSize

    def with_options(self, options: Mapping[str, Any]) -> "JournalConfig":
        return dataclasses.replace(self, **_validate(options))


_FIELDS = {f.name: f for f in dataclasses.fields(JournalConfig)}
_KEYS_BY_LOWER = {name.lower(): name for name in _FIELDS}


def _validate(options: Mapping[str, Any]) -> dict[str, Any]:
    """Turns raw option strings into typed values, rejecting anything unknown."""
    values: dict[str, Any] = {}
    for raw_key, value in options.items():
        key = _KEYS_BY_LOWER.get(str(raw_key).lower())
        if key is None:
            raise ConfigError(str(raw_key), value,
                              "nothing: it is not a sparkjournal option (known options: "
                              + ", ".join(sorted(_FIELDS)) + ")")
        values[key] = _parse_one(key, value)
    checked = {**{k: _FIELDS[k].default for k in _FIELDS}, **values}
    if checked["bufferSize"] > checked["fileSize"] - FILE_HEADER_SIZE:
        raise ConfigError("bufferSize", checked["bufferSize"],
                          f"a size below fileSize - {FILE_HEADER_SIZE} bytes "
                          f"(fileSize is {checked['fileSize']})")
    if checked["bufferSize"] % checked["deviceBlockSize"]:
        raise ConfigError("bufferSize", checked["bufferSize"],
                          f"a multiple of deviceBlockSize ({checked['deviceBlockSize']})")
    return values


def _parse_one(key: str, value: Any) -> Any:
    """One option's typed value; a bad one raises ConfigError with the key's
    one description of what it accepts (config_keys.py)."""
    try:
        return _parse_typed(key, value)
    except ConfigError:
        raise ConfigError(key, value, accepts(key)) from None


def _parse_typed(key: str, value: Any) -> Any:
    if key in ("fileSize",):
        size = parse_size(key, value)
        if size < 2 * FILE_HEADER_SIZE or size % FILE_SIZE_MULTIPLE or size >= 1 << 32:
            raise ConfigError(key, value, "a multiple of 4k from 8k up to 4g - 4k, such as 10m")
        return size
    if key in ("bufferSize", "largeRecordSize"):
        size = parse_size(key, value)
        if key == "bufferSize" and size < 4096:
            raise ConfigError(key, value, "a size of at least 4k, such as 490k")
        return size
    if key == "deviceBlockSize":
        size = parse_size(key, value)
        if size not in (512, 1024, 2048, 4096):
            raise ConfigError(key, value, "512, 1k, 2k or 4k (a power of two the device accepts)")
        return size
    if key in ("bufferTimeout", "laneIdleTimeout"):
        return parse_time_ns(key, value)
    if key == "retention":
        return value if isinstance(value, tuple) else parse_retention(key, value)
    if key in ("maxSizeBytes", "maxRootSizeBytes"):
        if str(value).strip() == "-1":
            return -1
        return parse_size(key, value)
    if key == "pageSizeBytes":
        size = parse_size(key, value)
        if size < 4096:
            raise ConfigError(key, value, "a size of at least 4k, such as 10m")
        return size
    if key == "addressFullPolicy":
        text = str(value).strip().upper()
        if text not in ADDRESS_FULL_POLICIES:
            raise ConfigError(key, value, "PAGE (move the oldest events to page files), BLOCK "
                              "(writers wait), DROP (new events are dropped and counted) or "
                              "FAIL (the write fails)")
        return text
    if key == "journalType":
        text = str(value).strip().upper()
        if text not in JOURNAL_TYPES:
            raise ConfigError(key, value, "AUTO (AIO where O_DIRECT works, else NIO), "
                              "ASYNCIO (forced) or NIO (forced)")
        return text
    if key == "dirMode":
        return parse_mode(key, value, 0o700)
    if key == "fileMode":
        return parse_mode(key, value, 0o600)
    if key == "minFiles":
        return parse_int(key, value, 1)
    if key == "poolFiles":
        return parse_int(key, value, -1)
    if key == "maxIO":
        return parse_int(key, value, 1, 4096)
    if key == "compactMinFiles":
        return parse_int(key, value, 0)
    if key == "compactPercentage":
        return parse_int(key, value, 0, 100)
    if key == "userVersion":
        return parse_int(key, value, 0, 0xFFFFFFFF)
    if key == "archiveDirectory":
        text = str(value)
        if not text or os.path.isabs(text) or ".." in text.replace("\\", "/").split("/"):
            raise ConfigError(key, value, "a folder name inside the journal folder, "
                              "without '..' (such as archive)")
        return text
    return parse_bool(key, value)


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
