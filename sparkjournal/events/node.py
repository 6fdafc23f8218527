"""Which node root a process writes to, and how that root is known elsewhere.

A journal path names the node-local root, the same path on every node. It may
hold placeholders resolved where the code runs:

* ``{host}``     - this machine's host name;
* ``{executor}`` - the Spark executor id (``driver`` on the driver and in local
  mode), for several executors on one machine that must not share a root (the
  ``local-cluster`` master is the case this exists for).

Readers that see every root (one machine, a shared mount) expand placeholders
with a glob (``node_roots``).

Every root carries a NODE_ID file (a random id plus the host name), created
once, atomically and exclusively: commit messages name a lane as (node id, lane),
so the driver can tell whether the root it sees at a message's path is the very
root the task wrote to, and never commits into a different node's lane that
happens to have the same path.
"""
from __future__ import annotations

import glob
import os
import re
import socket
import uuid

from ..errors import SparkJournalError
from ..format.constants import PATHS
from ..io.files_io import fsync_dir
from ..io.modes import create_file, make_dirs

NODE_ID_FILE = PATHS.NODE_ID_FILE
PLACEHOLDERS = ("{host}", "{executor}")
_WORKER_DIR = re.compile(r"/app-[0-9]+-[0-9]+/([0-9]+)/?$")


def executor_id() -> str:
    """The executor id of this process, ``driver`` outside executors.

    Kubernetes sets SPARK_EXECUTOR_ID; standalone and local-cluster run executors
    (and their Python workers) in ``work/<app-id>/<executor-id>``."""
    env = os.environ.get("SPARK_EXECUTOR_ID")
    if env:
        return env
    match = _WORKER_DIR.search(os.getcwd())
    return match.group(1) if match else "driver"


def resolve_root(path: str) -> str:
    """The absolute node root this process uses for ``path``."""
    resolved = path.replace("{host}", socket.gethostname()).replace("{executor}", executor_id())
    if "{" in resolved or "}" in resolved:
        raise SparkJournalError(f"journal path {path!r} holds an unknown placeholder; the "
                                f"known ones are {', '.join(PLACEHOLDERS)}")
    return os.path.abspath(resolved)


def node_roots(path: str) -> list[str]:
    """Every node root of ``path`` visible from here (placeholders as globs)."""
    if not any(p in path for p in PLACEHOLDERS):
        return [os.path.abspath(path)] if os.path.isdir(path) else []
    pattern = path
    for placeholder in PLACEHOLDERS:
        pattern = pattern.replace(placeholder, "*")
    return sorted(os.path.abspath(p) for p in glob.glob(pattern) if os.path.isdir(p))


_ASCII_WHITESPACE = b" \t\r\n"


class NodeIdError(SparkJournalError):
    """A root's NODE_ID that is not UTF-8: *damaged* (EVENTS.md). No writer
    writes one; the root's lanes are not read, nothing is changed."""

    def __init__(self, path: str, detail: str):
        self.path = path
        super().__init__(f"NODE_ID file {path} is damaged: {detail}. Nothing was changed; "
                         f"restore it from a backup (the commit log names this root's lanes "
                         f"by the node id it held)")


def read_node_id(root: str) -> str | None:
    """The node id of ``root`` (EVENTS.md, "A node root"): NODE_ID's UTF-8
    text without leading and trailing ASCII whitespace (space, tab, CR, LF:
    not str.strip()'s Unicode whitespace); None for a missing or empty file.
    Raises NodeIdError for bytes that are not UTF-8."""
    path = os.path.join(root, NODE_ID_FILE)
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    try:
        text = raw.strip(_ASCII_WHITESPACE).decode("utf-8")
    except UnicodeDecodeError as error:
        raise NodeIdError(path, f"its bytes are not UTF-8 ({error})") from None
    return text or None


def node_id(root: str) -> str:
    """The id of the node root ``root``, creating the root and its id if needed.

    Crash behaviour: the id is written and synced under a unique temporary name,
    then hard-linked to NODE_ID (which fails if another process won the race:
    its id is used) and the folder synced; a crash leaves no NODE_ID or a
    complete one, and at worst a stray temporary file."""
    existing = read_node_id(root)
    if existing:
        return existing
    make_dirs(root)
    ident = f"{uuid.uuid4().hex}@{socket.gethostname()}"
    tmp = os.path.join(root, f".{NODE_ID_FILE}.{uuid.uuid4().hex}.tmp")
    fd = create_file(tmp, os.O_WRONLY | os.O_EXCL)
    try:
        os.write(fd, ident.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, os.path.join(root, NODE_ID_FILE))
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    fsync_dir(root)
    return read_node_id(root)
