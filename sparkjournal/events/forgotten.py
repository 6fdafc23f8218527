"""Forgotten nodes (format/COMMIT_LOG.md, "Forgotten nodes"): nodes an
operator declared gone for good with ``sparkjournal nodes --forget``. Their
lanes are neither required nor read; writers refuse their roots; every read
reports the events it leaves out because of them.

Crash behaviour: a record is created exclusively (whole or absent) and
removed by ``--restore`` with one delete; nothing else is written.
Everything here is JSON; nothing read is unpickled or evaluated.
"""
from __future__ import annotations

import dataclasses
import json
import logging

from ..config_keys import one_path_segment
from ..errors import FormatVersionError, SparkJournalError
from ..format import strict_json as sj
from ..format.constants import FORGOTTEN_NODE as FIELDS, PATHS
from .commit_log import CommitLog, CommitLogError

log = logging.getLogger("sparkjournal.read")
FOLDER = PATHS.FORGOTTEN
FORMAT = 1


class ForgottenNodeError(SparkJournalError):
    """A write into a forgotten node's root, or a damaged forgotten-node record."""


@dataclasses.dataclass(frozen=True)
class ForgottenNode:
    node: str
    forgotten_at_ms: int
    batches: int
    rows: int
    bytes: int
    lanes: tuple[str, ...]

    def to_json(self) -> bytes:
        return json.dumps({FIELDS.FORMAT: FORMAT, FIELDS.NODE: self.node,
                           FIELDS.FORGOTTEN_AT_MS: self.forgotten_at_ms,
                           FIELDS.BATCHES: self.batches, FIELDS.ROWS: self.rows,
                           FIELDS.BYTES: self.bytes, FIELDS.LANES: list(self.lanes)},
                          sort_keys=True).encode()


def _path(log: CommitLog, node: str) -> str:
    if not one_path_segment(node):
        raise SparkJournalError(f"{node!r} is not a node id (uuid@host, as `sparkjournal nodes` "
                                f"lists them)")
    return f"{log.base}/{FOLDER}/{node}.json"


def parse(raw: bytes, where: str, node: str) -> ForgottenNode:
    """The record of ``node`` (its file's name): FormatVersionError for a
    newer format, ForgottenNodeError for anything else no writer writes."""
    try:
        data = sj.top_object(sj.loads(raw, "the record"), "the record")
        found = sj.newer_format(data, FORMAT)
        if found is not None:
            raise FormatVersionError(where, found, FORMAT, "forgotten node record")
        sj.format_of(data, FORMAT)
        if sj.string(data, FIELDS.NODE) != node:
            raise sj.JsonRefused(f"it names node {sj.show(data[FIELDS.NODE])}, not "
                                 f"{sj.show(node)} its file is named for")
        counts = [sj.whole(data, name) for name in (FIELDS.FORGOTTEN_AT_MS, FIELDS.BATCHES,
                                                    FIELDS.ROWS, FIELDS.BYTES)]
        lanes = sj.array(data, FIELDS.LANES)
        if not all(type(lane) is str for lane in lanes):
            raise sj.JsonRefused("lanes must be a list of lane names")
        return ForgottenNode(node, *counts, tuple(lanes))
    except sj.JsonRefused as error:
        raise ForgottenNodeError(f"forgotten node record {where} is damaged ({error}): restore it "
                                 f"from a backup, or delete it to restore the node") from error


def read_forgotten(log: CommitLog) -> dict[str, ForgottenNode]:
    """{node id: its record} of every forgotten node (one listing)."""
    found = {}
    for info in log.list_names(f"{log.base}/{FOLDER}"):
        name = info.base_name
        if not name.endswith(".json"):
            continue                              # a *.tmp of a forget in progress
        raw = log.read_bytes(info.path)
        if raw is not None:                       # restored meanwhile
            found[name[:-5]] = parse(raw, info.path, name[:-5])
    return found


def forget(log: CommitLog, record: ForgottenNode) -> bool:
    """Records the node as forgotten; False if it already was."""
    try:
        return log.create_exclusive(_path(log, record.node), record.to_json())
    except CommitLogError as error:
        raise CommitLogError(f"{error}; the node was not forgotten") from error


def restore(log: CommitLog, node: str) -> bool:
    """Removes the node's record; False if it was not forgotten."""
    path = _path(log, node)
    if log.read_bytes(path) is None:
        return False
    log.delete([path])
    return True


def quarantined(path: str, node: str, hosts: list[str]) -> None:
    """A forgotten node's root found live: its lanes stay out of the read."""
    log.warning("%s: node %s is forgotten (sparkjournal nodes --forget) but its root is back on "
                "host(s) %s: its lanes stay out of every read (quarantined) until `sparkjournal "
                "nodes %s --restore %s`", path, node, ", ".join(sorted(set(hosts))) or "this host",
                path, node)


def refuse_forgotten_root(forgotten: dict, node: str, root: str) -> None:
    """A writer's check before it writes into ``root`` (NODE_ID ``node``)."""
    record = forgotten.get(node)
    if record is not None:
        raise ForgottenNodeError(
            f"root {root} carries NODE_ID {node}, which an operator forgot (sparkjournal nodes "
            f"--forget): nothing written here would be read. Bring the node back with "
            f"`sparkjournal nodes PATH --restore {node}`, or give this host a fresh root "
            f"(move the old one aside)")
