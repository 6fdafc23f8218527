"""Paths that must stay inside a journal: the folders options name
(archiveDirectory, the commit log under the root) and the ones sparkjournal
names itself (lanes, ``large/``, ``attic/``, ``requests/`` and their files).

Contract: ``check_inside`` resolves ``..`` and every symbolic link of both the
root and the path, and refuses a path whose real location is not the root or
below it, with PathOutsideError naming what it is (the option or the folder),
the path, where it really leads and what to do. A path that does not exist yet
is checked through its nearest existing ancestor, so a folder created after the
check is created where the check said. A lane must be a real folder, never a
link (``refuse_link``): its writer replaces files in it, which through a link
would happen somewhere nobody chose. Light (no pyarrow, no C core).
"""
from __future__ import annotations

import os

from ..errors import SparkJournalError


class PathOutsideError(SparkJournalError, ValueError):
    """A path a journal would read or write leads outside the journal, or is a link."""

    def __init__(self, what: str, path: str, root: str, message: str):
        self.what, self.path, self.root = what, path, root
        super().__init__(message)


def check_inside(root: str, path: str, what: str) -> str:
    """The real path of ``path`` (absolute, or relative to ``root``), which must
    lie inside ``root``; PathOutsideError otherwise (module doc)."""
    real_root = os.path.realpath(root)
    target = os.path.join(root, path)
    real = os.path.realpath(target)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        how = ("through a symbolic link " if os.path.normpath(os.path.abspath(target)) != real
               and ".." not in path.split(os.sep) else "")
        raise PathOutsideError(what, path, root, (
            f"{what} {path!r} leads {how}to {real!r}, outside the journal {root!r}; "
            f"sparkjournal only reads and writes inside its journal: name a folder inside "
            f"it, without '..', absolute paths or symbolic links that lead out"))
    return real


def refuse_link(path: str, what: str, root: str) -> None:
    """``path`` must not be a symbolic link (a lane: module doc)."""
    if os.path.islink(path):
        raise PathOutsideError(what, path, root, (
            f"{what} {path!r} of the journal {root!r} is a symbolic link (to "
            f"{os.readlink(path)!r}), which sparkjournal refuses: a lane must be a real "
            f"folder. Replace the link by the folder it points to, or remove it"))
