"""The constants Python, Java and C share, from their one declaration,
constants.json beside this file (FORMAT.md, "Constants").

Contract: each group of the declaration is a module attribute of its name in
upper case (``RECORD_TYPES``, ``METADATA_COLUMNS``, ...), a read-only mapping
of NAME -> value that also answers ``GROUP.NAME``, in the declaration's order.
A value is an int or a str, exactly as declared; ``magic(value)`` gives a
string tag as the ASCII bytes files hold. A group marked ``json_fields`` in
the declaration (``FIELD_GROUPS``) names the JSON fields of one structure on
disk (its ``doc`` cites the section that specifies it): NAME -> the field's
name, which encoders write and decoders read. The JVM build generates
io.sparkjournal.format.Constants from the same file (spark/jvm_constants.py).
Importing this module reads the file once; a missing or malformed declaration
fails the import (the package cannot work without it).
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping

DECLARATION_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "constants.json")


class Group(Mapping):
    """One declared group: NAME -> value, in declared order; ``doc`` says what it holds."""

    def __init__(self, name: str, doc: str, values: dict, extra: dict):
        self._name, self.doc, self._values, self.extra = name, doc, dict(values), extra
        self.__dict__.update(self._values)      # GROUP.NAME at a plain attribute's cost (hot decoders)

    def __getitem__(self, name: str):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, name: str):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(f"constants group {self.__dict__.get('_name')} declares no {name}") \
                from None

    def __repr__(self) -> str:
        return f"Group({self._name}, {self._values})"


def load(path: str = DECLARATION_PATH) -> dict[str, Group]:
    """{group name: Group} of the declaration at ``path``; ValueError where a
    value is neither an int nor an ASCII str, or a name is not an identifier."""
    with open(path, encoding="utf-8") as handle:
        declared = json.load(handle)
    groups = {}
    for name, group in declared["groups"].items():
        for key, value in group["values"].items():
            if not key.isidentifier() or not (
                    (isinstance(value, int) and not isinstance(value, bool))
                    or (isinstance(value, str) and value.isascii())):
                raise ValueError(f"{path}: {name}.{key} = {value!r} is not a shared constant "
                                 f"(an identifier naming an int or an ASCII string)")
        extra = {k: v for k, v in group.items() if k not in ("doc", "values")}
        groups[name] = Group(name, group["doc"], group["values"], extra)
    return groups


def magic(value: str) -> bytes:
    """A declared tag as the bytes a file holds."""
    return value.encode("ascii")


GROUPS = load()
FORMAT = GROUPS["format"]
RECORD_TYPES = GROUPS["record_types"]
RECORD_FLAGS = GROUPS["record_flags"]
USER_TYPES = GROUPS["user_types"]
METADATA_COLUMNS = GROUPS["metadata_columns"]
HIDDEN_COLUMNS = GROUPS["hidden_columns"]
SCHEMA_METADATA = GROUPS["schema_metadata"]
REQUEST_KINDS = GROUPS["request_kinds"]
MAGICS = GROUPS["magics"]
PATHS = GROUPS["paths"]
FIELD_GROUPS = tuple(name for name, group in GROUPS.items() if group.extra.get("json_fields"))
CONTROL_FILE = GROUPS["control_file"]
COMMIT_ENTRY = GROUPS["commit_entry"]
ENTRY_TX = GROUPS["entry_tx"]
CHECKPOINT = GROUPS["checkpoint"]
CHECKPOINT_QUERY = GROUPS["checkpoint_query"]
CHECKPOINT_LANE = GROUPS["checkpoint_lane"]
CHECKPOINT_NODE = GROUPS["checkpoint_node"]
FORGOTTEN_NODE = GROUPS["forgotten_node"]
XID = GROUPS["xid"]
LANE_REQUEST = GROUPS["lane_request"]
DELETE_REQUEST = GROUPS["delete_request"]
PAGE_REQUEST = GROUPS["page_request"]
REQUESTED_PAGE = GROUPS["requested_page"]
