"""Who may touch a journal: the one place folders and files inside a journal are
created, with the permission bits of the journal's ``dirMode`` / ``fileMode``.

Contract: every folder (root, lane, ``large/``, ``requests/``, ``attic/``,
``archive/``, the commit log under the root) is made by ``make_dirs`` and every
file (data files and their ``.tmp``, lock files, control and request files,
large bodies, the commit log's decisions, ``NODE_ID``) is opened for creation by
``create_file``. The modes are asked of the kernel at creation, so the umask
still applies (the defaults 0750 / 0640 under the usual umask 022 stay 0750 /
0640: no group or world write); existing files are never chmod-ed.

Which modes: those a ``JournalConfig`` registered for the nearest enclosing
folder (``use_modes``; ``Journal.open``/``read``, ``JournalRoot``, compaction
and the sink's committer register theirs), else the defaults. A process that
creates files in a journal without having opened it with a config (a stand-alone
tool) therefore uses 0750 / 0640.
"""
from __future__ import annotations

import errno as errno_codes
import os
import threading

from ..errors import JournalIOError

DEFAULT_DIR_MODE = 0o750
DEFAULT_FILE_MODE = 0o640

_lock = threading.Lock()
_registered: dict[str, tuple[int, int]] = {}   # absolute folder -> (dir mode, file mode)


def use_modes(folder: str, dir_mode: int, file_mode: int) -> None:
    """Folders and files created at or below ``folder`` get these modes."""
    with _lock:
        _registered[os.path.abspath(folder)] = (dir_mode, file_mode)


def use_config_modes(folder: str, config) -> None:
    use_modes(folder, config.dirMode, config.fileMode)


def modes_for(path: str) -> tuple[int, int]:
    """(dir mode, file mode) for something created at ``path``."""
    here = os.path.abspath(path)
    with _lock:
        while True:
            found = _registered.get(here)
            if found is not None:
                return found
            parent = os.path.dirname(here)
            if parent == here:
                return DEFAULT_DIR_MODE, DEFAULT_FILE_MODE
            here = parent


def make_dirs(path: str) -> None:
    """Creates ``path`` and any missing parents, each with the dir mode; an
    existing folder is left as it is."""
    if os.path.isdir(path):
        return
    parent = os.path.dirname(os.path.abspath(path))
    if parent and not os.path.isdir(parent):
        make_dirs(parent)
    make_dir(path, exist_ok=True)


def make_dir(path: str, exist_ok: bool = False) -> None:
    """One folder with the dir mode; FileExistsError if it exists and not ``exist_ok``
    (``mkdir`` is atomic, so racing creators learn who won)."""
    try:
        os.mkdir(path, modes_for(path)[0])
    except FileExistsError:
        if not exist_ok or not os.path.isdir(path):
            raise
    except OSError as error:
        raise not_writable(error, path) from error


def create_file(path: str, flags: int) -> int:
    """``os.open(path, flags | O_CREAT | O_CLOEXEC, file mode)``: the fd."""
    try:
        return os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, modes_for(path)[1])
    except OSError as error:
        raise not_writable(error, path) from error


READ_ONLY = (errno_codes.EROFS, errno_codes.EACCES, errno_codes.EPERM)


def not_writable(error: OSError, path: str) -> OSError:
    """A read-only or foreign folder as a JournalIOError saying so (errno kept);
    other errors unchanged."""
    if error.errno not in READ_ONLY:
        return error
    name = errno_codes.errorcode.get(error.errno, str(error.errno))
    return JournalIOError(error.errno, (
        f"cannot create {path}: {error.strerror} ({name}). Writers and maintenance need "
        f"the journal folder writable (readers do not): remount it read-write or give "
        f"this user write access to it"))
