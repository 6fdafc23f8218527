"""JSON on disk read and written as format/JSON.md defines it, not as Python's
``json`` module happens to accept it.

``loads`` enforces the reader requirements 1-5 (UTF-8 without a byte-order
mark, one value, no NaN or Infinity, each name once per object, no lone
surrogate escapes, at most 32 levels of nesting) and raises ``JsonRefused``
for anything else, whatever Python would make of it. The getters enforce
requirement 6 on one field each: an integer is a JSON integer (never a bool,
a float or a string of digits) within its range, a string is a string, and so
on; an absent field is refused unless the getter is given its default.
``canonical`` is the canonical form a CRC covers ("Writer requirements").

Nothing read is evaluated or bound to classes: the result is a plain tree of
dict, list, str, int, float, bool and None. ``JsonRefused`` is a ValueError;
each reader turns it into the error its structure names (JSON.md, "Error
kinds"), never guessing around it.
"""
from __future__ import annotations

import json
import math

MAX_DEPTH = 32
MAX_NUMBER_DIGITS = 4300         # longer numbers are refused (CPython's own limit for integers)
U64 = (1 << 64) - 1
WHOLE = (1 << 63) - 1              # a *whole number* of COMMIT_LOG.md: batches, epochs, counts, times
MISSING = object()                  # a getter's default: the field is required


class JsonRefused(ValueError):
    """Bytes or a field that JSON.md refuses; the message names what was wrong."""


def _refuse_constant(name: str):
    raise JsonRefused(f"holds {name}, which is not a JSON number")


def _finite(text: str) -> float:
    if len(text) > MAX_NUMBER_DIGITS:
        raise JsonRefused(f"holds a number of more than {MAX_NUMBER_DIGITS} characters")
    value = float(text)
    if math.isinf(value):
        raise JsonRefused(f"holds the number {text[:40]}, too large for any reader")
    return value


def _once(pairs: list) -> dict:
    made = dict(pairs)
    if len(made) != len(pairs):
        seen = set()
        for name, _value in pairs:
            if name in seen:
                raise JsonRefused(f"names {show(name)} twice in one object")
            seen.add(name)
    return made


_DECODER = json.JSONDecoder(object_pairs_hook=_once, parse_constant=_refuse_constant,
                            parse_float=_finite)


def loads(raw: bytes, what: str):
    """The one JSON value in ``raw``; JsonRefused (its message starting with
    ``what``, e.g. "the entry") if JSON.md's reader requirements refuse it."""
    raw = bytes(raw)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise JsonRefused(f"{what} is not UTF-8 ({error.reason} at byte {error.start})") from None
    if text.startswith("\ufeff"):
        raise JsonRefused(f"{what} starts with a byte-order mark")
    try:
        value = _DECODER.decode(text)
    except JsonRefused as error:
        raise JsonRefused(f"{what} {error}") from None
    except RecursionError:
        raise JsonRefused(f"{what} nests arrays or objects more than {MAX_DEPTH} deep") from None
    except ValueError as error:
        if "integer string conversion" in str(error):       # Python's int digit limit
            raise JsonRefused(f"{what} holds an integer of more digits than any field's "
                              f"range") from None
        raise JsonRefused(f"{what} is not one JSON value ({error})") from None
    # A lone surrogate can only come from a \u escape, and the brackets alone
    # bound the depth: most files need no walk of the tree.
    walk_strings = "\\u" in text
    if walk_strings or not _shallow(raw):
        _walk(value, 1, what, walk_strings)
    return value


def _shallow(raw: bytes) -> bool:
    """True if ``raw`` holds at most MAX_DEPTH brackets that open, so it cannot
    nest deeper (brackets inside strings count too: an upper bound); False
    where the walk of the tree must tell (a walk costs ~7x less than taking
    the strings out of the text to count again)."""
    return raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH


def _walk(value, depth: int, what: str, strings: bool) -> None:
    if depth > MAX_DEPTH:
        raise JsonRefused(f"{what} nests arrays or objects more than {MAX_DEPTH} deep")
    if type(value) is dict:
        for name, item in value.items():
            if strings:
                _text(name, what)
            if type(item) in (dict, list):
                _walk(item, depth + 1, what, strings)
            elif strings and type(item) is str:
                _text(item, what)
    elif type(value) is list:
        for item in value:
            if type(item) in (dict, list):
                _walk(item, depth + 1, what, strings)
            elif strings and type(item) is str:
                _text(item, what)
    elif strings and type(value) is str:
        _text(value, what)


def _text(value: str, what: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise JsonRefused(f"{what} holds a \\u escape of a lone surrogate") from None


def show(value) -> str:
    """A value as JSON, cut short: for messages."""
    try:
        shown = json.dumps(value)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


# --- typed fields (JSON.md, reader requirement 6) --------------------------------

def _field(where: dict, name: str, default):
    value = where.get(name, MISSING)
    if value is MISSING and default is MISSING:
        raise JsonRefused(f'"{name}" is missing')
    return value


def integer(where: dict, name: str, lo: int = 0, hi: int = U64, default=MISSING) -> int:
    """Field ``name`` of ``where``: a JSON integer from ``lo`` to ``hi``."""
    value = _field(where, name, default)
    if value is MISSING:
        return default
    if type(value) is int and lo <= value <= hi:
        return value
    raise JsonRefused(f'"{name}" must be an integer from {lo} to {hi}, not {show(value)}')


def whole(where: dict, name: str, default=MISSING) -> int:
    """Field ``name``: a whole number, 0 .. 2^63-1 (batches, epochs, counts, times)."""
    return integer(where, name, 0, WHOLE, default)


def is_integer(value, lo: int = 0, hi: int = U64) -> bool:
    """Whether an element of a list is a JSON integer from ``lo`` to ``hi``."""
    return type(value) is int and lo <= value <= hi


def _typed(where: dict, name: str, default, kind: type, must_be: str):
    """Field ``name`` of ``where`` of exactly type ``kind`` (bool is no int)."""
    value = _field(where, name, default)
    if value is MISSING:
        return default
    if type(value) is kind:
        return value
    raise JsonRefused(f'"{name}" must be {must_be}, not {show(value)}')


def string(where: dict, name: str, default=MISSING) -> str:
    return _typed(where, name, default, str, "a string")


def boolean(where: dict, name: str, default=MISSING) -> bool:
    return _typed(where, name, default, bool, "true or false")


def array(where: dict, name: str, default=MISSING) -> list:
    return _typed(where, name, default, list, "a list")


def obj(where: dict, name: str, default=MISSING) -> dict:
    return _typed(where, name, default, dict, "an object")


def top_object(value, what: str) -> dict:
    """``value`` (as ``loads`` returned it) if it is an object."""
    if type(value) is dict:
        return value
    raise JsonRefused(f"{what} is not a JSON object but {show(value)}")


def newer_format(where: dict, known: int):
    """The structure's ``format`` if it is an integer above ``known`` (refused as
    a newer format before any other field is looked at), else None."""
    found = where.get("format")
    return found if type(found) is int and found > known else None


def format_of(where: dict, known: int) -> int:
    """``format``, which must be ``known`` (call ``newer_format`` first)."""
    return integer(where, "format", known, known)


# --- the canonical form (JSON.md, "Writer requirements") ----------------------

_ESCAPES = {ord('"'): '\\"', ord("\\"): "\\\\", **{c: f"\\u{c:04x}" for c in range(0x20)}}


def canonical(value) -> bytes:
    """``value``'s canonical form: names sorted by code point, no whitespace,
    integers in decimal, strings escaped only where they must be, UTF-8.
    ValueError for what the form does not define (a float, a lone surrogate,
    a name that is not a string)."""
    parts: list[str] = []
    _canonical(value, parts)
    try:
        return "".join(parts).encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("a string holds a lone surrogate, which the canonical form cannot "
                         "write") from None


def _canonical(value, parts: list) -> None:
    kind = type(value)
    if kind is str:
        parts.append('"' + value.translate(_ESCAPES) + '"')
    elif kind is bool:
        parts.append("true" if value else "false")
    elif kind is int:
        parts.append(str(value))
    elif value is None:
        parts.append("null")
    elif kind is dict:
        if not all(type(name) is str for name in value):
            raise ValueError("an object's names must be strings")
        parts.append("{")
        for at, name in enumerate(sorted(value)):
            if at:
                parts.append(",")
            parts.append('"' + name.translate(_ESCAPES) + '":')
            _canonical(value[name], parts)
        parts.append("}")
    elif kind in (list, tuple):
        parts.append("[")
        for at, item in enumerate(value):
            if at:
                parts.append(",")
            _canonical(item, parts)
        parts.append("]")
    else:
        raise ValueError(f"the canonical form has no place for {kind.__name__} {value!r}")
